import Foundation
import Hummingbird

/// `PaymentInquiry` (by the merchant's `RefNum`: every payment authorized
/// under it, an empty `TransactionList` when there is none) and the refund
/// operation, `RefundPayment`.
///
/// `RefundPayment` is the name public integrations use; STC Pay publishes no
/// name for it (unofficial). It takes the paid payment's `STCPayRefNum`, an
/// `Amount` and the merchant's `RefNum` for the refund: a retry with the same
/// `RefNum` and amount answers the first refund again and moves nothing; the
/// same `RefNum` with another amount, an unknown or unpaid payment, or more
/// than is left to refund, is 2001.
struct STCPayInquiryAPI: Sendable {
    let simulator: STCPaySimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("PaymentInquiry") { request, _ -> Response in
            do throws(STCPayWire.Refusal) {
                try STCPayWire.checkClient(request)
                let body = try await STCPayWire.decode(STCPayWire.InquiryRequest.self, operation: "PaymentInquiry", request)
                guard let refNum = body.RefNum, !refNum.isEmpty else { throw .badFormat("RefNum is required") }
                let list = api.simulator.state.withLock { $0.payments(refNum: refNum).map(\.transaction) }
                return STCPayWire.answer("PaymentInquiry", STCPayMessages.Inquiry(TransactionList: list))
            } catch {
                return error.response
            }
        }
        routes.post("RefundPayment") { request, _ -> Response in
            do throws(STCPayWire.Refusal) {
                try STCPayWire.checkClient(request)
                let body = try await STCPayWire.decode(STCPayWire.RefundRequest.self, operation: "RefundPayment", request)
                return STCPayWire.answer("RefundPayment", try api.refund(body))
            } catch {
                return error.response
            }
        }
    }

    func refund(_ body: STCPayWire.RefundRequest) throws(STCPayWire.Refusal) -> STCPayMessages.Refund {
        guard let paid = body.STCPayRefNum, !paid.isEmpty else { throw .badFormat("STCPayRefNum is required") }
        guard let reference = body.RefNum, !reference.isEmpty, reference.count <= 100 else {
            throw .badFormat("RefNum (the refund's reference) is required (at most 100 characters)")
        }
        let halalas = try STCPayWire.halalas(body.Amount)
        let result: Result<STCPayRefund, STCPayWire.Refusal> = simulator.state.withLock { state in
            guard let key = state.payments.first(where: { $0.value.stcPayRefNum == paid })?.key,
                  var payment = state.payment(key), payment.status == 2 else {
                return .failure(.badFormat("STCPayRefNum \(paid.prefix(30)) is not a paid payment"))
            }
            if let earlier = payment.refunds.first(where: { $0.reference == reference }) {
                guard earlier.halalas == halalas else {
                    return .failure(.badFormat("refund RefNum \(reference.prefix(50)) was already used with Amount \(STCPayWire.amount(earlier.halalas))"))
                }
                return .success(earlier)
            }
            let left = payment.halalas - payment.refunded
            guard halalas <= left else {
                return .failure(.badFormat("Amount \(STCPayWire.amount(halalas)) exceeds the \(STCPayWire.amount(left)) left to refund"))
            }
            let refund = STCPayRefund(reference: reference, halalas: halalas, stcPayRefNum: state.nextReference())
            payment.refunds.append(refund)
            state.payments[key] = payment
            return .success(refund)
        }
        let refund = try result.get()
        return STCPayMessages.Refund(NewSTCPayRefNum: refund.stcPayRefNum, STCPayRefNum: paid,
                                     Amount: STCPayWire.amount(refund.halalas), RefNum: refund.reference)
    }
}
