import Foundation
import GatewayAdapterSDK

/// verify (`PaymentInquiry` by RefNum, the host's payment id) and refund (`RefundPayment`).
extension STCPayAdapter {
    func verify(paymentId: String, reference: String?) async throws -> AdapterResult {
        let transactions = try await client.inquiry(paymentId)
        guard let current = transactions.first(where: { $0.PaymentStatus == 2 }) ?? transactions.last else {
            // STC Pay lists every authorization under a RefNum: none means nothing was asked, nothing charged.
            return AdapterResult(status: .failed, providerReference: reference, problem: AdapterProblem(
                code: .unknownPayment, message: "STC Pay has no payment with RefNum \(paymentId.prefix(50))", retryable: false))
        }
        let status = current.PaymentStatus ?? 0
        let amount = Self.money(current.Amount)
        switch status {
        case 1: return AdapterResult(status: .pending, providerReference: reference, amount: amount, providerStatus: "1")
        case 2:
            guard let amount else { throw AdapterError.outcomeUnknown("STC Pay reported RefNum \(paymentId.prefix(50)) paid without a usable Amount") }
            return AdapterResult(status: .succeeded, providerReference: reference, amount: amount, providerStatus: "2")
        case 4:
            return AdapterResult(status: .cancelled, providerReference: reference, problem: AdapterProblem(
                code: .userCancelled, message: "the payment was cancelled in STC Pay", retryable: true, providerCode: "4"), providerStatus: "4")
        case 5:
            return AdapterResult(status: .failed, providerReference: reference, problem: AdapterProblem(
                code: .expired, message: "the STC Pay payment request expired unpaid", retryable: false, providerCode: "5"), providerStatus: "5")
        default:
            throw AdapterError.outcomeUnknown("STC Pay reported RefNum \(paymentId.prefix(50)) with unknown PaymentStatus \(status)")
        }
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        guard request.amount.currency == "SAR" else {
            return Self.refundFailure(.currencyMismatch, "STC Pay refunds SAR only, not \(request.amount.currency.prefix(8))")
        }
        guard request.amount.value > 0 else { return Self.refundFailure(.invalidAmount, "a refund amount must be positive") }
        guard !request.idempotencyKey.isEmpty else {
            throw AdapterError.invalidRequest("idempotencyKey is required: it is the refund's RefNum at STC Pay, which makes a retry refund once")
        }
        let refNum = STCPayRefundRefNum.make(idempotencyKey: request.idempotencyKey)
        let transactions = try await client.inquiry(request.paymentId)
        guard let paid = transactions.first(where: { $0.PaymentStatus == 2 }), let stcPayRefNum = paid.STCPayRefNum else {
            return Self.refundFailure(.invalidState, "STC Pay holds no paid payment for RefNum \(request.paymentId.prefix(50))")
        }
        let answer: STCPayAnswer
        do {
            answer = try await client.send("RefundPayment", STCPayWire.RefundRequest(
                STCPayRefNum: stcPayRefNum, Amount: try Self.amount(request.amount), RefNum: refNum))
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("STC Pay's RefundPayment got no answer: \(error.message)")
        }
        if answer.ok, let refunded = answer.message("RefundPayment", STCPayWire.RefundAnswer.self), let reference = refunded.NewSTCPayRefNum {
            return AdapterResult(status: .succeeded, providerReference: reference, amount: Self.money(refunded.Amount) ?? request.amount,
                                 providerStatus: "refunded")
        }
        guard (400..<500).contains(answer.status), let code = answer.failure?.Code else {
            throw AdapterError.outcomeUnknown("STC Pay's RefundPayment answered \(answer.summary)")
        }
        return Self.refundFailure(.invalidState, "STC Pay refused the refund: \(answer.summary)", providerCode: String(code))
    }

    static func refundFailure(_ code: ProblemCode, _ message: String, providerCode: String? = nil) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(code: code, message: message, retryable: false, providerCode: providerCode),
                      providerStatus: providerCode)
    }
}
