import Foundation
import GatewayPayloads
import Hummingbird

/// `POST /v1/payments/{id}`: capture (CP) of a pre-authorization, refund (RF)
/// of a debit or capture, reversal (RV) of an uncaptured pre-authorization or
/// a debit. OPPWA documents no de-duplication of these by
/// `merchantTransactionId`, so neither does the simulator: a repeated call
/// moves money again (the worst case a client must survive; the adapter asks
/// the transaction reports, `GET /v1/query`, before it sends).
///
/// A refund references what took the money, as on OPPWA: a DB or a CP. An RF
/// on a PA (captured or not) is refused with `700.300.100` "referenced tx can
/// not be refunded, captured or reversed (invalid type)", so a client that
/// kept only the pre-authorization's id learns it must refund its captures.
struct HyperPayBackOffice: Sendable {
    let simulator: HyperPaySimulator

    private enum Outcome {
        case done(HyperPayTransaction)
        case refused(code: String, detail: String)
    }

    func perform(on paymentId: String, _ form: [String: String]) -> Response {
        let paymentType = form["paymentType"] ?? ""
        guard ["CP", "RF", "RV"].contains(paymentType) else {
            return HyperPayWire.parameterError([("paymentType", paymentType, "must be CP, RF or RV on /v1/payments/{id}")])
        }
        guard let entityId = form["entityId"], HyperPayAPI.entities.contains(entityId) else {
            return HyperPayWire.parameterError([("entityId", form["entityId"] ?? "", "unknown entityId for this access token")])
        }
        let reference = form["merchantTransactionId"]
        let wrongLength = HyperPayWire.lengthErrors(form)
        if !wrongLength.isEmpty { return HyperPayWire.parameterError(wrongLength) }
        let outcome: Outcome? = simulator.state.withLock { state in
            guard var original = state.transactions[paymentId], original.entityId == entityId else { return nil }
            var amount = original.amount
            if paymentType != "RV" {
                guard form["currency"] == original.amount.currency,
                      let asked = HyperPayAPI.parseAmount(form["amount"] ?? "", currency: original.amount.currency) else {
                    return .refused(code: HyperPayResultCode.invalidParameter,
                                    detail: "invalid or missing parameter - amount and currency must be given in the payment's currency \(original.amount.currency)")
                }
                amount = asked
            }
            let outcome = Self.apply(paymentType, amount: amount, to: &original, state: &state)
            guard case .done(var transaction) = outcome else {
                // OPPWA's reports hold a refused call too, with its code.
                if case .refused(let code, _) = outcome, let reference {
                    state.record(HyperPayTransaction(
                        id: HyperPayWire.randomID(), paymentType: paymentType, entityId: entityId, amount: amount, code: code,
                        merchantTransactionId: reference, brand: original.brand, referencedId: original.id,
                        checkoutId: original.checkoutId, timestamp: HyperPayWire.timestamp()))
                }
                return outcome
            }
            transaction.entityId = entityId
            transaction.merchantTransactionId = reference
            state.transactions[original.id] = original
            state.record(transaction)
            return .done(transaction)
        }
        switch outcome {
        case nil:
            return HyperPayWire.response(.badRequest, HyperPayWire.document(
                HyperPayResultCode.invalidParameter, description: "invalid or missing parameter - referenced payment \(paymentId.prefix(40)) not found for this entity"))
        case .refused(let code, let detail):
            return HyperPayWire.response(.badRequest, HyperPayWire.document(code, description: detail))
        case .done(let transaction):
            return HyperPayWire.response(.ok, HyperPayWire.document(transaction.code, HyperPayAPI.members(of: transaction)))
        }
    }

    /// Checks the workflow and moves the amounts; the new transaction on success.
    private static func apply(_ type: String, amount: Money, to original: inout HyperPayTransaction,
                              state: inout HyperPayState) -> Outcome {
        let settled = HyperPayResultCode.moved(original.code)
        switch type {
        case "CP":
            let left = original.amount.value - original.captured
            guard original.paymentType == "PA", settled, !original.reversed, amount.value <= left else {
                return .refused(code: HyperPayResultCode.cannotCapture,
                                detail: HyperPayResultCode.descriptions[HyperPayResultCode.cannotCapture]! + " - \(max(0, left)) minor units capturable")
            }
            original.captured += amount.value
            state.charges += 1
        case "RF":
            guard original.paymentType == "DB" || original.paymentType == "CP" else {
                return .refused(code: HyperPayResultCode.invalidReferenceType,
                                detail: HyperPayResultCode.descriptions[HyperPayResultCode.invalidReferenceType]!
                                    + " - a \(original.paymentType) is refunded through its captures (CP)")
            }
            let base = original.amount.value
            let left = base - original.refunded
            guard settled, !original.reversed, base > 0, amount.value <= left else {
                return .refused(code: HyperPayResultCode.cannotRefund,
                                detail: HyperPayResultCode.descriptions[HyperPayResultCode.cannotRefund]! + " - \(max(0, left)) minor units refundable")
            }
            original.refunded += amount.value
        default:
            let reversible = (original.paymentType == "PA" && original.captured == 0) || (original.paymentType == "DB" && original.refunded == 0)
            guard settled, !original.reversed, reversible else {
                return .refused(code: HyperPayResultCode.cannotReverse, detail: HyperPayResultCode.descriptions[HyperPayResultCode.cannotReverse]!)
            }
            original.reversed = true
        }
        return .done(HyperPayTransaction(
            id: HyperPayWire.randomID(), paymentType: type, entityId: original.entityId, amount: amount,
            code: HyperPayResultCode.success, brand: original.brand, referencedId: original.id,
            checkoutId: original.checkoutId, timestamp: HyperPayWire.timestamp()))
    }
}
