import Crypto
import Foundation
import GatewayAdapterSDK

/// capture, refund and void.
extension TabbyAdapter {
    /// `POST /api/v2/payments/{id}/captures` with `reference_id` derived from
    /// the request's idempotency key (``referenceId(_:)``): a retry after a
    /// lost answer captures nothing twice.
    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        try await move(request, path: "captures", what: "capture") { payment, amount in
            guard payment.status == "AUTHORIZED" else { return (.invalidState, "only an AUTHORIZED payment can be captured (it is \(payment.status ?? "?"))") }
            let left = payment.total - payment.captured
            if amount > left { return (.amountExceedsAuthorized, "capture of \(amount) exceeds the \(left) left") }
            return nil
        }
    }

    /// `POST /api/v2/payments/{id}/refunds` with `reference_id` derived from
    /// the request's idempotency key. Tabby refunds only a CLOSED payment with captures.
    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        try await move(request, path: "refunds", what: "refund") { payment, amount in
            guard payment.status == "CLOSED", payment.captured > 0 else {
                return (.invalidState, "only a captured, CLOSED payment can be refunded (it is \(payment.status ?? "?"), \(payment.captured) captured)")
            }
            let left = payment.captured - payment.refunded
            if amount > left { return (.amountExceedsCaptured, "refund of \(amount) exceeds the \(left) left") }
            return nil
        }
    }

    /// The `reference_id` of a capture or refund, Tabby's idempotency key
    /// for it: the first 20 bytes of the engine key's SHA-256 in hex, 40
    /// characters. Tabby documents no length for it, and the engine's keys
    /// run to some 300 characters, every refund of a payment sharing its
    /// first 43: cut anywhere by the provider, a second refund would look
    /// like a replay of the first (nothing moved, yet reported done). The
    /// same engine key gives the same id on every retry; two keys one id
    /// only with a 160-bit collision.
    static func referenceId(_ engineKey: String) -> String {
        SHA256.hash(data: Data(engineKey.utf8)).prefix(20).map { String(format: "%02x", $0) }.joined()
    }

    /// A capture or refund. A refusal (4xx) is explained from the payment
    /// as it stands (`why`: the problem code and message, or nil when the
    /// payment does not explain it).
    private func move(_ request: AmountRequest, path: String, what: String,
                      why: (TabbyWire.Payment, Int64) -> (ProblemCode, String)?) async throws -> AdapterResult {
        let reference = try TabbyReference(request.providerReference)
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        let amount: String
        do { amount = try request.amount.decimalString() } catch { throw AdapterError.invalidRequest("amount: \(error)") }
        let referenceId = Self.referenceId(request.idempotencyKey)
        // A retry whose first try landed, under this id or (sent before ids were
        // digests) under the key itself, is answered from the payment: never sent again.
        // The same read explains a refusal below (a refused call moves nothing).
        let before = try await client.payment(reference)
        if let payment = before {
            let movements = (path == "refunds" ? payment.refunds : payment.captures) ?? []
            if let earlier = movements.first(where: { [referenceId, request.idempotencyKey].contains($0.referenceId ?? "") }) {
                guard payment.money(earlier.amount) == request.amount else {
                    return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                        code: .invalidState, message: "Tabby holds a \(what) under this key with another amount (\(earlier.amount ?? "?"))",
                        retryable: false), providerStatus: payment.status)
                }
                host.log(.info, "Tabby already holds the \(what) under this key on \(reference.paymentId): answered from the payment, nothing sent again")
                return AdapterResult(status: .succeeded, providerReference: reference.text, amount: request.amount, providerStatus: payment.status)
            }
        }
        let body = TabbyWire.MovementRequest(amount: amount, referenceId: referenceId,
                                             reason: path == "refunds" ? (request.reason ?? "merchant refund") : nil)
        let answer: TabbyAnswer
        do {
            answer = try await client.send("POST", "/api/v2/payments/\(reference.paymentId)/\(path)", region: reference.region, body)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Tabby's \(what) got no answer: \(error.message)")
        }
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("Tabby's \(what) answered \(answer.summary)") }
        if answer.ok {
            let payment = answer.decode(TabbyWire.Payment.self)
            return AdapterResult(status: .succeeded, providerReference: reference.text, amount: request.amount, providerStatus: payment?.status)
        }
        func failed(_ code: ProblemCode, _ message: String) -> AdapterResult {
            AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                code: code, message: "Tabby refused the \(what): \(message)", retryable: false, providerCode: answer.errorType), providerStatus: answer.errorType)
        }
        switch answer.status {
        case 404: return failed(.unknownPayment, answer.summary)
        case 409: return failed(.invalidState, "reference_id \(referenceId) (of key \(request.idempotencyKey.prefix(64))) was used before with another amount (\(answer.summary))")
        case 400, 422:
            // Nothing moved: the payment as read before the call says why.
            if let payment = before, let (code, message) = why(payment, request.amount.value) {
                return failed(code, message)
            }
            return failed(.providerError, answer.summary)
        default:
            return failed(.providerError, answer.summary)
        }
    }

    /// Closes an AUTHORIZED payment with nothing captured
    /// (`POST /api/v2/payments/{id}/close`): Tabby's way to release an
    /// authorization. The payment is read first, because close also ends a
    /// partly captured payment, which is not a void.
    func void(_ request: VoidRequest) async throws -> AdapterResult {
        let reference = try TabbyReference(request.providerReference)
        let payment: TabbyWire.Payment?
        do {
            payment = try await client.payment(reference)
        } catch AdapterError.outcomeUnknown(let why) {
            // Only a read was lost: nothing was closed.
            return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                code: .providerError, message: "\(why); nothing was closed", retryable: true))
        }
        guard let payment else { return Self.unknown(reference) }
        let released = Money(value: payment.total, currency: payment.currency ?? "")
        if payment.status == "CLOSED", payment.captured == 0 {
            // Already closed (an earlier void whose answer was lost).
            return AdapterResult(status: .succeeded, providerReference: reference.text, amount: released, providerStatus: "CLOSED")
        }
        guard payment.status == "AUTHORIZED", payment.captured == 0 else {
            return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                code: .invalidState, message: "only an uncaptured AUTHORIZED Tabby payment can be voided (it is \(payment.status ?? "?"), \(payment.captured) captured)",
                retryable: false), providerStatus: payment.status)
        }
        let answer: TabbyAnswer
        do {
            answer = try await client.send("POST", "/api/v2/payments/\(reference.paymentId)/close", region: reference.region)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Tabby's close got no answer: \(error.message)")
        }
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("Tabby's close answered \(answer.summary)") }
        guard answer.ok else {
            return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                code: .invalidState, message: "Tabby refused to close the payment: \(answer.summary)", retryable: false,
                providerCode: answer.errorType), providerStatus: answer.errorType)
        }
        return AdapterResult(status: .succeeded, providerReference: reference.text, amount: released, providerStatus: "CLOSED")
    }
}
