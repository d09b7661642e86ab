import GatewayPayloads

/// The money of one payment: what was authorized, captured and refunded, and
/// whether the authorization was voided. Every change is checked, so refunds
/// never exceed captures and captures never exceed the authorization.
public struct PaymentBalance: Sendable, Equatable, Codable {
    public private(set) var authorized: Money
    public private(set) var captured: Int64
    public private(set) var refunded: Int64
    public private(set) var voided: Bool
    /// Captures and refunds sent to the provider whose outcome is not known
    /// yet (unknown, or pending at the provider), by the provider idempotency
    /// key they were sent with. Held back from what may be captured or
    /// refunded until a retry under the same key settles them.
    public private(set) var inFlight: [String: InFlight] = [:]

    public struct InFlight: Sendable, Equatable, Codable {
        public var operation: String
        public var amount: Int64
    }
    /// Charged at once (automatic capture): nothing is left to capture or void.
    public let capturedAutomatically: Bool

    public init(authorized: Money, capturedAutomatically: Bool) {
        self.authorized = authorized
        self.captured = capturedAutomatically ? authorized.value : 0
        self.refunded = 0
        self.voided = false
        self.capturedAutomatically = capturedAutomatically
    }

    public var capturable: Int64 { voided ? 0 : authorized.value - captured - held("capture") - held("void") }
    public var refundable: Int64 { captured - refunded - held("refund") }

    private func held(_ operation: String) -> Int64 {
        inFlight.values.reduce(0) { $0 + ($1.operation == operation ? $1.amount : 0) }
    }

    /// Holds `amount` back for an operation sent under `key` whose outcome is not known.
    public mutating func hold(_ operation: String, _ amount: Int64, key: String) {
        inFlight[key] = InFlight(operation: operation, amount: amount)
    }

    /// Releases what was held under `key` (the operation settled either way).
    public mutating func release(key: String) {
        inFlight[key] = nil
    }

    /// Checks a capture of `amount` (full or partial) without applying it.
    public func checkCapture(_ amount: Money) throws(DomainError) {
        try checkAmount(amount)
        if capturedAutomatically { throw .captureOfAutomaticPayment }
        if voided { throw .alreadyVoided }
        guard amount.value <= capturable else { throw .exceedsAuthorized(requested: amount.value, remaining: capturable) }
    }

    public mutating func capture(_ amount: Money) throws(DomainError) {
        try checkCapture(amount)
        captured += amount.value
    }

    /// Checks a refund of `amount` (partial and repeated allowed) without applying it.
    public func checkRefund(_ amount: Money) throws(DomainError) {
        try checkAmount(amount)
        guard amount.value <= refundable else { throw .exceedsCaptured(requested: amount.value, remaining: refundable) }
    }

    public mutating func refund(_ amount: Money) throws(DomainError) {
        try checkRefund(amount)
        refunded += amount.value
    }

    /// Checks a void (release of an uncaptured authorization) without applying it.
    public func checkVoid() throws(DomainError) {
        if voided { throw .alreadyVoided }
        guard captured == 0, held("capture") == 0 else { throw .voidAfterCapture(captured: captured + held("capture")) }
    }

    public mutating func void() throws(DomainError) {
        try checkVoid()
        voided = true
    }

    private func checkAmount(_ amount: Money) throws(DomainError) {
        guard amount.currency == authorized.currency else { throw .currencyMismatch(expected: authorized.currency, got: amount.currency) }
        guard amount.value > 0 else { throw .nonPositiveAmount(amount.value) }
    }
}

extension PaymentBalance {
    /// For the document codec only: a balance exactly as it was stored.
    init(restoring authorized: Money, captured: Int64, refunded: Int64, voided: Bool, inFlight: [String: InFlight],
         capturedAutomatically: Bool) {
        self.authorized = authorized
        self.captured = captured
        self.refunded = refunded
        self.voided = voided
        self.inFlight = inFlight
        self.capturedAutomatically = capturedAutomatically
    }
}
