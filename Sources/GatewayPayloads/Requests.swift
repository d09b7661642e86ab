/// Request documents the host sends with each operation (docs/payloads.md).
/// Every mutating request carries an `idempotencyKey`: a provider that supports
/// one receives it, so a retried call can never charge twice.

/// How an authorized payment is captured.
public enum CaptureMode: String, Codable, Sendable, CaseIterable {
    /// Charge at once.
    case automatic
    /// Reserve only; the merchant captures later.
    case manual
}

/// Who pays. Every member is optional; adapters use what their provider needs.
public struct Payer: Sendable, Hashable {
    public var name: String?
    public var email: String?
    public var phone: String?
    /// The merchant's own id for the payer (Swedbank Pay's `payerReference`):
    /// 1 to 64 visible ASCII characters. A provider keys saved cards by it.
    public var reference: String?
    public init(name: String? = nil, email: String? = nil, phone: String? = nil, reference: String? = nil) {
        self.name = name
        self.email = email
        self.phone = phone
        self.reference = reference
    }

    /// Whether `reference` is 1 to 64 visible ASCII characters (no spaces).
    public static func isValidReference(_ reference: String) -> Bool {
        let bytes = reference.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// `authorize`: start a payment.
public struct AuthorizeRequest: Sendable, Hashable {
    /// The host's id of this attempt; stable across retries of the same attempt.
    public var paymentId: String
    public var idempotencyKey: String
    public var amount: Money
    /// One of the adapter's methods (`visa`, `mada`, `stcpay`, ...).
    public var method: String
    /// ISO 3166-1 alpha-2.
    public var country: String?
    public var orderId: String
    public var capture: CaptureMode
    /// Method-specific data: a token, an encrypted card blob, a phone number;
    /// for the mock adapter, `scenario`. Never a clear card number.
    public var instrument: [String: JSONValue]?
    public var payer: Payer?
    /// Where a redirect or 3-D Secure flow sends the payer back to.
    public var returnUrl: String?

    public init(
        paymentId: String, idempotencyKey: String, amount: Money, method: String,
        country: String? = nil, orderId: String, capture: CaptureMode = .automatic,
        instrument: [String: JSONValue]? = nil, payer: Payer? = nil, returnUrl: String? = nil
    ) {
        self.paymentId = paymentId
        self.idempotencyKey = idempotencyKey
        self.amount = amount
        self.method = method
        self.country = country
        self.orderId = orderId
        self.capture = capture
        self.instrument = instrument
        self.payer = payer
        self.returnUrl = returnUrl
    }
}

/// `continue`: what the payer did about a pending payment's action.
public struct ContinueRequest: Sendable, Hashable {
    public var paymentId: String
    public var idempotencyKey: String
    public var providerReference: String
    /// The one-time password the payer typed, for an `otp` action.
    public var otp: String?
    /// Query or form parameters the payer came back with, for `redirect` and `three_ds`.
    public var returnParams: [String: String]?

    public init(
        paymentId: String, idempotencyKey: String, providerReference: String,
        otp: String? = nil, returnParams: [String: String]? = nil
    ) {
        self.paymentId = paymentId
        self.idempotencyKey = idempotencyKey
        self.providerReference = providerReference
        self.otp = otp
        self.returnParams = returnParams
    }
}

/// `verify`: ask the provider for the payment's current state. Never mutates.
public struct VerifyRequest: Sendable, Hashable {
    public var paymentId: String
    public var providerReference: String?
    public init(paymentId: String, providerReference: String?) {
        self.paymentId = paymentId
        self.providerReference = providerReference
    }
}

/// `capture` and `refund`: move `amount` (at most what is left).
public struct AmountRequest: Sendable, Hashable {
    public var paymentId: String
    public var idempotencyKey: String
    public var providerReference: String
    public var amount: Money
    /// Free text for the provider's records (refunds).
    public var reason: String?
    /// `capture` only: what the host has recorded as captured on this payment
    /// before this request, counting confirmed captures only (not those whose
    /// outcome is still unknown). An adapter whose provider takes no
    /// idempotency key for captures compares it with the provider's captured
    /// total to tell a retry whose first try landed from a new capture.
    public var alreadyCaptured: Money?
    /// `refund` only: the captures the host has confirmed on this payment,
    /// oldest first, each with the provider reference its capture answered.
    /// Absent when the payment was captured at once (a debit), or when the
    /// host lacks the reference of any of its captures (a partial list would
    /// misplace the refund). A provider that refunds a capture rather than the
    /// authorization (HyperPay refunds a CP, not its PA) refunds against
    /// these.
    public var captures: [CaptureReference]?
    /// `refund` only: what the host has recorded as refunded on this payment
    /// before this request, counting confirmed refunds only. With
    /// ``captures``, it tells which captures earlier refunds drew on: they are
    /// taken from the captures oldest first.
    public var alreadyRefunded: Money?

    public init(
        paymentId: String, idempotencyKey: String, providerReference: String,
        amount: Money, reason: String? = nil, alreadyCaptured: Money? = nil,
        captures: [CaptureReference]? = nil, alreadyRefunded: Money? = nil
    ) {
        self.paymentId = paymentId
        self.idempotencyKey = idempotencyKey
        self.providerReference = providerReference
        self.amount = amount
        self.reason = reason
        self.alreadyCaptured = alreadyCaptured
        self.captures = captures
        self.alreadyRefunded = alreadyRefunded
    }
}

/// One confirmed capture of a payment, as ``AmountRequest/captures`` lists
/// it: the provider reference the capture answered, and the amount it took.
public struct CaptureReference: Sendable, Hashable {
    public var providerReference: String
    public var amount: Money

    public init(providerReference: String, amount: Money) {
        self.providerReference = providerReference
        self.amount = amount
    }
}

/// `void`: release an authorization that was not captured.
public struct VoidRequest: Sendable, Hashable {
    public var paymentId: String
    public var idempotencyKey: String
    public var providerReference: String
    public init(paymentId: String, idempotencyKey: String, providerReference: String) {
        self.paymentId = paymentId
        self.idempotencyKey = idempotencyKey
        self.providerReference = providerReference
    }
}

/// `webhook`: a provider's notification exactly as it arrived.
public struct WebhookRequest: Sendable, Hashable {
    /// Header names in lower case.
    public var headers: [String: String]
    /// The raw body, base64-encoded (signatures are over the exact bytes).
    public var body: String
    public init(headers: [String: String], body: String) {
        self.headers = headers
        self.body = body
    }
}
