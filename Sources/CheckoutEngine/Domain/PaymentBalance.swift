import Foundation
import GatewayPayloads

/// The money of one payment: what was authorized, captured and refunded, and
/// whether the authorization was voided. Every change is checked, so refunds
/// never exceed captures and captures never exceed the authorization.
public struct PaymentBalance: Sendable, Equatable {
    public private(set) var authorized: Money
    public private(set) var captured: Int64
    public private(set) var refunded: Int64
    public private(set) var voided: Bool
    /// Captures and refunds sent to the provider whose outcome is not known
    /// yet (unknown, or pending at the provider), by the provider idempotency
    /// key they were sent with. Held back from what may be captured or
    /// refunded until a retry under the same key settles them.
    public private(set) var inFlight: [String: InFlight] = [:]

    /// The captures the provider confirmed, oldest first, with the provider's
    /// reference of each where it gave one: a refund is sent against them.
    public private(set) var captures: [Capture] = []

    public struct Capture: Sendable, Equatable {
        public var providerReference: String?
        public var amount: Int64
    }

    /// An operation sent to the provider whose outcome is not settled yet.
    /// Reconciliation settles it (``Checkout``'s `settleHeld`), so nothing
    /// stays held for ever.
    public struct InFlight: Sendable, Equatable {
        /// A capture, refund or void.
        public var operation: PaymentOperation
        public var amount: Int64
        /// The caller's idempotency key (as the engine stores it): the
        /// settled outcome becomes that key's answer.
        public var requestKey: String?
        /// Why it is held, for operators: sent and not answered yet, the
        /// outcome unknown (and why), or pending at the provider.
        public var reason: String?
        public var since: Date?
        /// When reconciliation next settles it: while the call is in flight,
        /// the end of its lease (a crashed engine's holds are picked up then).
        public var nextCheckAt: Date?
        public var checks: Int
        /// The engine that last sent it (``Checkout/engineID``): on a store
        /// several hosts share, another host's retry does not send it again
        /// while that engine may still be waiting for its answer.
        public var sentBy: String?

        public init(operation: PaymentOperation, amount: Int64, requestKey: String? = nil, reason: String? = nil, since: Date? = nil,
                    nextCheckAt: Date? = nil, checks: Int = 0, sentBy: String? = nil) {
            self.operation = operation
            self.amount = amount
            self.requestKey = requestKey
            self.reason = reason
            self.since = since
            self.nextCheckAt = nextCheckAt
            self.checks = checks
            self.sentBy = sentBy
        }
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

    public var capturable: Int64 { voided ? 0 : authorized.value - captured - held(.capture) - held(.void) }
    public var refundable: Int64 { captured - refunded - held(.refund) }

    private func held(_ operation: PaymentOperation) -> Int64 {
        inFlight.values.reduce(0) { $0 + ($1.operation == operation ? $1.amount : 0) }
    }

    /// Holds `amount` back for an operation sent under `key` whose outcome is not known.
    public mutating func hold(_ operation: PaymentOperation, _ amount: Int64, key: String) {
        inFlight[key] = InFlight(operation: operation, amount: amount)
    }

    /// Holds an operation with its bookkeeping (see ``InFlight``).
    public mutating func hold(_ held: InFlight, key: String) {
        inFlight[key] = held
    }

    /// When the earliest held operation is due to be settled.
    public var nextHeldCheck: Date? {
        inFlight.values.compactMap(\.nextCheckAt).min()
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

    public mutating func capture(_ amount: Money, providerReference: String? = nil) throws(DomainError) {
        try checkCapture(amount)
        captured += amount.value
        captures.append(Capture(providerReference: providerReference, amount: amount.value))
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
        guard captured == 0, held(.capture) == 0 else { throw .voidAfterCapture(captured: captured + held(.capture)) }
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
         captures: [Capture], capturedAutomatically: Bool) {
        self.authorized = authorized
        self.captured = captured
        self.refunded = refunded
        self.voided = voided
        self.inFlight = inFlight
        self.captures = captures
        self.capturedAutomatically = capturedAutomatically
    }
}

extension PaymentBalance.InFlight {
    /// The reason of an operation sent to `provider` whose answer is not
    /// recorded yet.
    static func sent(to provider: String) -> String { "sent to \(provider); no answer yet" }

    /// Sent, no answer recorded, and its lease (``nextCheckAt``) not ended:
    /// the request that sent it may still be waiting for the provider's
    /// answer.
    func awaitsItsAnswer(at now: Date) -> Bool {
        guard let reason, reason.hasPrefix("sent to "), reason.hasSuffix("; no answer yet"), let until = nextCheckAt else { return false }
        return until > now
    }
}
