import Crypto
import Foundation
import GatewayAdapterSDK

/// capture, refund and void: OPPWA's back-office CP, RF and RV.
extension HyperPayAdapter {
    /// CP, RF or RV on the checkout's payment, with the engine's idempotency
    /// key as `merchantTransactionId` (a retry gets the first answer).
    func backOffice(_ type: String, _ text: String, amount: Money?, key: String) async throws -> AdapterResult {
        let reference = try HyperPayReference(text)
        let found: HyperPayAnswer
        do {
            found = try await query(reference)
        } catch AdapterError.outcomeUnknown(let why) {
            // Only the read was lost: nothing was asked to move.
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: "provider_error", message: "\(why); the \(Self.operationName(type)) was not sent", retryable: true))
        }
        guard found.status == 200, let paymentId = found["id"], let code = found.code else {
            // Nothing was asked to move yet: a clean failure, whatever the reason.
            let (code, retryable) = switch found.status {
            case 200: ("invalid_state", false)
            case 400, 404: ("unknown_payment", false)
            default: ("provider_error", true)
            }
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: code, message: "HyperPay has no paid payment for checkout \(reference.checkoutId.prefix(64)) to \(Self.operationName(type)): \(found.summary)",
                retryable: retryable, providerCode: found.code), providerStatus: found.code)
        }
        let currency = found["currency"] ?? ""
        var form = [("entityId", entity(reference.kind)), ("paymentType", type), ("merchantTransactionId", Self.transactionId(key))]
        if let amount {
            guard amount.value > 0, let decimal = try? amount.decimalString() else {
                return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(code: "invalid_amount", message: "amount must be positive in a known currency", retryable: false))
            }
            guard amount.currency == currency else {
                return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(code: "currency_mismatch", message: "the payment is in \(currency)", retryable: false))
            }
            form += [("amount", decimal), ("currency", currency)]
        }
        guard HyperPayResultClass(code) == .success || HyperPayResultClass(code) == .review else {
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: "invalid_state", message: "the payment's result is \(code) \(found.resultDescription); there is nothing to \(Self.operationName(type))", retryable: false),
                providerStatus: code)
        }
        let answer: HyperPayAnswer
        do {
            answer = try await client.send("POST", "/v1/payments/\(HyperPayClient.segment(paymentId))", form)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) got no answer: \(error.message); retry with the same key")
        }
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) answered HTTP \(answer.status): \(answer.summary)") }
        guard let done = answer.code else {
            throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) answered HTTP \(answer.status) without a result code")
        }
        if HyperPayResultClass(done) == .success {
            let moved = answer["amount"].flatMap { try? Money(decimal: $0, currency: currency) } ?? amount
            return AdapterResult(status: .succeeded, providerReference: answer["id"], amount: moved, providerStatus: done)
        }
        if HyperPayResultClass(done) == .pending { return AdapterResult(status: .pending, providerReference: answer["id"], providerStatus: done) }
        let mapped = HyperPayResultClass.failure(done, description: answer.resultDescription).1
        let problemCode = switch done {
        case "700.400.100": "amount_exceeds_authorized"
        case "700.400.200": "amount_exceeds_captured"
        case "700.400.300": "invalid_state"
        default: mapped.code
        }
        return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
            code: problemCode, message: "HyperPay refused the \(Self.operationName(type)): \(answer.summary)",
            retryable: mapped.retryable && !done.hasPrefix("700."), providerCode: done),
            providerStatus: done)
    }

    static func operationName(_ type: String) -> String {
        switch type {
        case "CP": "capture"
        case "RF": "refund"
        default: "reversal"
        }
    }

    /// An id fit for `merchantTransactionId` (at most 255 characters): the id
    /// itself, or its SHA-256 when longer.
    static func transactionId(_ id: String) -> String {
        guard id.count > 255 else { return id }
        return SHA256.hash(data: Data(id.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
