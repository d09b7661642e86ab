/// Result documents adapters complete operations with (docs/payloads.md).

/// Where a payment stands after an operation.
public enum PaymentStatus: String, Codable, Sendable, CaseIterable {
    /// Money moved: charged (authorize/continue/verify), captured, refunded or voided.
    case succeeded
    /// Reserved, not yet captured (manual capture).
    case authorized
    /// Not final: the payer must act (see `action`) or the provider is still deciding.
    case pending
    /// Final and not charged; `problem` says why.
    case failed
    /// The payer or merchant cancelled; not charged.
    case cancelled
}

/// What the payer must do next for a pending payment.
public struct PaymentAction: Sendable, Hashable {
    /// This action with its `expiresAt` in the wire's one format (an
    /// adapter may write any RFC 3339 time: an offset, no milliseconds).
    public var withWireDates: PaymentAction {
        var copy = self
        if let date = expiresAt.flatMap(WireDate.parse) { copy.expiresAt = WireDate.string(date) }
        return copy
    }

    public enum Kind: String, Codable, Sendable {
        case redirect
        case threeDS = "three_ds"
        case otp
        case appSwitch = "app_switch"
    }
    public var type: Kind
    /// For redirect, three_ds and app_switch: where to send the payer.
    public var url: String?
    /// HTTP method for `url` (`GET` unless said).
    public var method: String?
    /// Form fields to post to `url`, when `method` is `POST`.
    public var formFields: [String: String]?
    /// For otp: how many digits the code has.
    public var otpLength: Int?
    /// When the action stops being valid, RFC 3339.
    public var expiresAt: String?
    /// Sandbox only: the code a simulator "sent by SMS". Never set in production.
    public var sandboxOtp: String?

    public init(
        type: Kind, url: String? = nil, method: String? = nil, formFields: [String: String]? = nil,
        otpLength: Int? = nil, expiresAt: String? = nil, sandboxOtp: String? = nil
    ) {
        self.type = type
        self.url = url
        self.method = method
        self.formFields = formFields
        self.otpLength = otpLength
        self.expiresAt = expiresAt
        self.sandboxOtp = sandboxOtp
    }
}

/// Why an operation failed, as the adapter understood its provider.
public struct AdapterProblem: Sendable, Hashable {
    /// Stable snake_case code: `insufficient_funds`, `card_declined`,
    /// `provider_error`, `user_cancelled`, `otp_invalid`, ... (docs/payloads.md),
    /// or the adapter's own (`ProblemCode(rawValue:)`).
    public var code: ProblemCode
    /// For the engineer; never card data or secrets.
    public var message: String
    /// Whether trying the same thing again later may succeed.
    public var retryable: Bool
    /// True only when the provider provably did not charge and another
    /// provider may be tried at once (refused before processing).
    public var safeToRetryElsewhere: Bool
    /// The provider's own code, for support.
    public var providerCode: String?
    /// ABI 1.1: the member of the attempt's request that was wrong
    /// (`instrument.msisdn`), when one was.
    public var field: String?

    public init(
        code: ProblemCode, message: String, retryable: Bool, safeToRetryElsewhere: Bool = false,
        providerCode: String? = nil, field: String? = nil
    ) {
        self.field = field
        self.code = code
        self.message = message
        self.retryable = retryable
        self.safeToRetryElsewhere = safeToRetryElsewhere
        self.providerCode = providerCode
    }
}

/// The result of `authorize`, `continue`, `verify`, `capture`, `refund` and `void`.
public struct AdapterResult: Sendable, Hashable {
    public var status: PaymentStatus
    /// The provider's id of the payment (or of the capture/refund).
    public var providerReference: String?
    /// The amount this status applies to: what was authorized or charged (it
    /// may be less than asked: a partial approval), captured, or refunded.
    public var amount: Money?
    /// Set when `status` is `pending` and the payer must act.
    public var action: PaymentAction?
    /// Why: always set when `status` is `failed` or `cancelled`; on `pending`,
    /// a retryable problem with the payer's last step (a wrong OTP, say).
    public var problem: AdapterProblem?
    /// The provider's raw status or result code, for support.
    public var providerStatus: String?
    /// On `verify`, where the provider reports them: what it holds as
    /// captured, refunded and voided for the payment in all. The host checks
    /// its own books against them.
    public var totals: PaymentTotals?

    public init(
        status: PaymentStatus, providerReference: String? = nil, amount: Money? = nil,
        action: PaymentAction? = nil, problem: AdapterProblem? = nil, providerStatus: String? = nil,
        totals: PaymentTotals? = nil
    ) {
        self.status = status
        self.providerReference = providerReference
        self.amount = amount
        self.action = action
        self.problem = problem
        self.providerStatus = providerStatus
        self.totals = totals
    }
}

/// A payment's totals at the provider (a `verify` result's `totals`).
public struct PaymentTotals: Sendable, Hashable {
    public var captured: Money
    public var refunded: Money
    public var voided: Bool

    public init(captured: Money, refunded: Money, voided: Bool) {
        self.captured = captured
        self.refunded = refunded
        self.voided = voided
    }
}

/// The result of `webhook`.
public struct WebhookResult: Sendable, Hashable {
    /// False when the notification's signature or origin could not be verified;
    /// the host then changes nothing.
    public var verified: Bool
    /// The provider's id of the notification, for de-duplication.
    public var eventId: String?
    public var paymentId: String?
    public var providerReference: String?
    /// The payment's state the notification reports.
    public var status: PaymentStatus?
    public var amount: Money?
    public var problem: AdapterProblem?

    public init(
        verified: Bool, eventId: String? = nil, paymentId: String? = nil,
        providerReference: String? = nil, status: PaymentStatus? = nil, amount: Money? = nil,
        problem: AdapterProblem? = nil
    ) {
        self.verified = verified
        self.eventId = eventId
        self.paymentId = paymentId
        self.providerReference = providerReference
        self.status = status
        self.amount = amount
        self.problem = problem
    }
}

/// The document of a non-`GW_OK` completion (`{"message": "..."}`).
public struct ErrorDocument: Sendable, Hashable {
    public var message: String
    public init(message: String) { self.message = message }
}

/// What `describe` returns: what the adapter instance really implements
/// (its codec: AdapterDescription+JSON.swift).
public struct AdapterDescription: Sendable, Hashable {
    public var id: String
    public var version: String
    public var methods: [String]
    public var operations: [PaymentOperation]
    /// Currencies the adapter can handle; empty or absent means "any".
    public var currencies: [String]?

    public init(id: String, version: String, methods: [String], operations: [PaymentOperation], currencies: [String]? = nil) {
        self.id = id
        self.version = version
        self.methods = methods
        self.operations = operations
        self.currencies = currencies
    }
}
