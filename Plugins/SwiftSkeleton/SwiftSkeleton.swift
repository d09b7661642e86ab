// swift-skeleton: a payment adapter in Swift on the gateway's adapter SDK
// (`gateway plugin new ID --lang swift` writes it, renamed). The SDK does the
// C ABI: the entry point, JSON framing, strict decoding of every request
// (malformed ones never reach this code), exactly-once completion, cancels,
// and the mapping of thrown errors to statuses. This file keeps what is the
// adapter's own: one method per operation, the provider's wire format and its
// status mapping.
//
// The provider here is simulated in memory (approves visa up to
// config.decline_above minor units, captures, refunds and voids what it
// approved): replace `Books` with your provider's API through
// `ProviderHTTPClient` (the host's egress, to hosts the manifest's `egress`
// lists), for example:
//
//     client = try ProviderHTTPClient(host: host, provider: "Acme", configuration: configuration,
//                                     example: "https://api.acme.example", authorization: .bearer(secret: "api_key"))
//     let answer = try await client.exchange("POST", "/payments", .json(body), what: "payment create")
//
// and keep the rules: an idempotency key's first answer is its answer; a
// lost answer is `AdapterError.outcomeUnknown`, never a decline.
import GatewayAdapterSDK
import Synchronization

final class SwiftSkeletonAdapter: PaymentAdapter {
    static let id = "swift-skeleton"
    static let version = "1.0.0"

    /// The simulated provider's books: its payments by reference, and the
    /// answer given under each idempotency key with what it was asked.
    struct Books {
        struct Payment {
            var amount: Money
            var capturedAutomatically: Bool
            var captured: Int64 = 0
            var refunded: Int64 = 0
            var voided = false
        }

        var payments: [String: Payment] = [:]
        var answers: [String: (request: String, result: AdapterResult)] = [:]
    }

    let books = Mutex(Books())
    let declineAbove: Int64

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        declineAbove = Int64(try configuration.integer("decline_above", default: 1_000_000))
        guard declineAbove > 0 else { throw AdapterError.invalidConfiguration("config.decline_above must be a positive amount in minor units") }
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: ["visa"], operations: [.authorize, .verify, .capture, .refund, .void],
                           currencies: ["SAR", "KWD", "JPY", "EUR"])
    }

    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard request.method == "visa" else { throw AdapterError.invalidRequest("swift-skeleton takes visa only, not \(request.method.prefix(40))") }
        try Self.check(request.amount)
        let asked = "authorize \(request.paymentId) \(request.amount.value) \(request.amount.currency) \(request.capture.rawValue)"
        return try answer(request.idempotencyKey, asked) { books in
            let reference = "sk_" + request.paymentId
            guard request.amount.value <= declineAbove else {
                return AdapterResult(status: .failed, providerReference: reference, problem: AdapterProblem(
                    code: .cardDeclined, message: "the simulated issuer declines above \(declineAbove)", retryable: false, providerCode: "05"),
                    providerStatus: "DECLINED")
            }
            let automatic = request.capture == .automatic
            var payment = Books.Payment(amount: request.amount, capturedAutomatically: automatic)
            if automatic { payment.captured = request.amount.value }
            books.payments[reference] = payment
            return AdapterResult(status: automatic ? .succeeded : .authorized, providerReference: reference, amount: request.amount,
                                 providerStatus: automatic ? "CAPTURED" : "AUTHORIZED")
        }
    }

    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        let reference = request.providerReference ?? "sk_" + request.paymentId
        return books.withLock { books in
            guard let payment = books.payments[reference] else {
                return AdapterResult(status: .failed, providerReference: reference,
                                     problem: AdapterProblem(code: .unknownPayment, message: "no payment \(reference.prefix(64))", retryable: false))
            }
            return Self.state(of: payment, reference)
        }
    }

    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        try Self.check(request.amount)
        return try move(request.idempotencyKey, "capture", request.providerReference, request.amount) { payment in
            guard !payment.voided, !payment.capturedAutomatically else { return (.invalidState, "nothing is left to capture") }
            guard payment.captured + request.amount.value <= payment.amount.value else { return (.amountExceedsAuthorized, "more than is left to capture") }
            payment.captured += request.amount.value
            return nil
        }
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        try Self.check(request.amount)
        return try move(request.idempotencyKey, "refund", request.providerReference, request.amount) { payment in
            guard payment.refunded + request.amount.value <= payment.captured else { return (.amountExceedsCaptured, "more than is left to refund") }
            payment.refunded += request.amount.value
            return nil
        }
    }

    func void(_ request: VoidRequest) async throws -> AdapterResult {
        try move(request.idempotencyKey, "void", request.providerReference, nil) { payment in
            guard payment.captured == 0, !payment.voided else { return (.invalidState, "only an uncaptured authorization can be voided") }
            payment.voided = true
            return nil
        }
    }

    // MARK: The simulated provider

    /// The answer under `key`: the first one given for the same request, or
    /// `body`'s, kept. The same key with another request is refused, and
    /// nothing is done for it.
    private func answer(_ key: String, _ asked: String, _ body: (inout Books) throws -> AdapterResult) throws -> AdapterResult {
        try books.withLock { books in
            if let first = books.answers[key] {
                guard first.request == asked else {
                    throw AdapterError.invalidRequest("idempotency key \(key.prefix(64)) was used with another request")
                }
                return first.result
            }
            let result = try body(&books)
            books.answers[key] = (asked, result)
            return result
        }
    }

    /// A capture, refund or void of the payment `reference` names: `change`
    /// applies it, or says why not (a problem code and message).
    private func move(_ key: String, _ operation: String, _ reference: String?, _ amount: Money?,
                      _ change: @escaping (inout Books.Payment) -> (ProblemCode, String)?) throws -> AdapterResult {
        let reference = reference ?? ""
        let asked = "\(operation) \(reference) \(amount.map { "\($0.value) \($0.currency)" } ?? "all")"
        return try answer(key, asked) { books in
            guard var payment = books.payments[reference] else {
                return AdapterResult(status: .failed, providerReference: reference,
                                     problem: AdapterProblem(code: .unknownPayment, message: "no payment \(reference.prefix(64))", retryable: false))
            }
            if let amount, amount.currency != payment.amount.currency {
                return AdapterResult(status: .failed, providerReference: reference, problem: AdapterProblem(
                    code: .currencyMismatch, message: "the payment is in \(payment.amount.currency)", retryable: false))
            }
            if let (code, message) = change(&payment) {
                return AdapterResult(status: .failed, providerReference: reference, problem: AdapterProblem(code: code, message: message, retryable: false))
            }
            books.payments[reference] = payment
            return AdapterResult(status: .succeeded, providerReference: reference, amount: amount, providerStatus: operation.uppercased() + "D")
        }
    }

    /// A payment's state as `verify` reports it, with its totals.
    private static func state(of payment: Books.Payment, _ reference: String) -> AdapterResult {
        let status: PaymentStatus = payment.voided ? .cancelled : payment.captured > 0 ? .succeeded : .authorized
        let currency = payment.amount.currency
        return AdapterResult(status: status, providerReference: reference, amount: payment.amount, providerStatus: status.rawValue.uppercased(),
                             totals: PaymentTotals(captured: Money(value: payment.captured, currency: currency),
                                                   refunded: Money(value: payment.refunded, currency: currency), voided: payment.voided))
    }

    /// A positive amount in an ISO 4217 code: anything else is the caller's mistake.
    private static func check(_ amount: Money) throws {
        guard amount.value > 0, amount.currency.utf8.count == 3, amount.currency.utf8.allSatisfy({ (65...90).contains($0) }) else {
            throw AdapterError.invalidRequest("amount must be positive, in an ISO 4217 currency code")
        }
    }
}

@_cdecl("gw_adapter_entry")
public func gatewayAdapterEntry(_ negotiation: UnsafeMutableRawPointer?) -> Int32 {
    AdapterExport.negotiate(negotiation, SwiftSkeletonAdapter.self)
}
