import GatewayPayloads

/// The money of one payment: what was authorized, captured and refunded, and
/// whether the authorization was voided. Every change is checked, so refunds
/// never exceed captures and captures never exceed the authorization.
public struct PaymentBalance: Sendable, Equatable, Codable {
    public private(set) var authorized: Money
    public private(set) var captured: Int64
    public private(set) var refunded: Int64
    public private(set) var voided: Bool
    /// Charged at once (automatic capture): nothing is left to capture or void.
    public let capturedAutomatically: Bool

    public init(authorized: Money, capturedAutomatically: Bool) {
        self.authorized = authorized
        self.captured = capturedAutomatically ? authorized.value : 0
        self.refunded = 0
        self.voided = false
        self.capturedAutomatically = capturedAutomatically
    }

    public var capturable: Int64 { voided ? 0 : authorized.value - captured }
    public var refundable: Int64 { captured - refunded }

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
        guard captured == 0 else { throw .voidAfterCapture(captured: captured) }
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
