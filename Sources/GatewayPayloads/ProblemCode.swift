/// A problem's stable snake_case code (`insufficient_funds`): one value with
/// identity, so a decision branches on `.outcomeUnknown`, never on a string.
///
/// The static members are every code the gateway itself knows (each has a
/// catalog entry with a title, status and payer message in the engine). An
/// adapter may report a code of its own with `init(rawValue:)`: it is kept
/// as given (`code`), and the host shows the generic payer message for it
/// (``isCatalogued`` false). On the wire a code is its raw string.
public struct ProblemCode: WireName {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Whether the gateway knows this code (one of the static members).
    public var isCatalogued: Bool { Self.catalogued.contains(self) }

    // A payment's outcome (adapters report these; docs/payloads.md §problem codes).
    public static let insufficientFunds = ProblemCode(rawValue: "insufficient_funds")
    public static let cardDeclined = ProblemCode(rawValue: "card_declined")
    public static let authenticationFailed = ProblemCode(rawValue: "authentication_failed")
    public static let fraudDetected = ProblemCode(rawValue: "fraud_detected")
    public static let invalidFields = ProblemCode(rawValue: "invalid_fields")
    public static let cardExpired = ProblemCode(rawValue: "card_expired")
    public static let invalidCardDetails = ProblemCode(rawValue: "invalid_card_details")
    public static let appLaunchFailed = ProblemCode(rawValue: "app_launch_failed")
    public static let walletDeclined = ProblemCode(rawValue: "wallet_declined")
    public static let invalidPhoneNumber = ProblemCode(rawValue: "invalid_phone_number")
    public static let otpInvalid = ProblemCode(rawValue: "otp_invalid")
    public static let otpAttemptsExceeded = ProblemCode(rawValue: "otp_attempts_exceeded")
    public static let userCancelled = ProblemCode(rawValue: "user_cancelled")
    public static let bnplDeclined = ProblemCode(rawValue: "bnpl_declined")
    public static let expired = ProblemCode(rawValue: "expired")
    public static let voided = ProblemCode(rawValue: "voided")
    public static let unknownPayment = ProblemCode(rawValue: "unknown_payment")
    public static let amountExceedsAuthorized = ProblemCode(rawValue: "amount_exceeds_authorized")
    public static let amountExceedsCaptured = ProblemCode(rawValue: "amount_exceeds_captured")
    public static let currencyMismatch = ProblemCode(rawValue: "currency_mismatch")
    public static let invalidAmount = ProblemCode(rawValue: "invalid_amount")
    public static let providerError = ProblemCode(rawValue: "provider_error")
    public static let networkError = ProblemCode(rawValue: "network_error")
    public static let paymentFailed = ProblemCode(rawValue: "payment_failed")

    // A request the engine refused.
    public static let notFound = ProblemCode(rawValue: "not_found")
    public static let idempotencyConflict = ProblemCode(rawValue: "idempotency_conflict")
    public static let invalidRequest = ProblemCode(rawValue: "invalid_request")
    public static let invalidState = ProblemCode(rawValue: "invalid_state")
    public static let methodUnavailable = ProblemCode(rawValue: "method_unavailable")
    public static let sessionExpired = ProblemCode(rawValue: "session_expired")
    public static let webhookUnverified = ProblemCode(rawValue: "webhook_unverified")

    // An HTTP request itself (the checkout API).
    public static let malformedRequest = ProblemCode(rawValue: "malformed_request")
    public static let unauthorized = ProblemCode(rawValue: "unauthorized")
    public static let methodNotAllowed = ProblemCode(rawValue: "method_not_allowed")
    public static let payloadTooLarge = ProblemCode(rawValue: "payload_too_large")
    public static let unsupportedMediaType = ProblemCode(rawValue: "unsupported_media_type")
    public static let internalError = ProblemCode(rawValue: "internal_error")
    public static let storeUnavailable = ProblemCode(rawValue: "store_unavailable")
    public static let operationInProgress = ProblemCode(rawValue: "operation_in_progress")
    public static let outcomeUnknown = ProblemCode(rawValue: "outcome_unknown")

    /// Every code the gateway knows, in the order above.
    public static let catalogued: Set<ProblemCode> = [
        .insufficientFunds, .cardDeclined, .authenticationFailed, .fraudDetected, .invalidFields, .cardExpired,
        .invalidCardDetails, .appLaunchFailed, .walletDeclined, .invalidPhoneNumber, .otpInvalid, .otpAttemptsExceeded,
        .userCancelled, .bnplDeclined, .expired, .voided, .unknownPayment, .amountExceedsAuthorized,
        .amountExceedsCaptured, .currencyMismatch, .invalidAmount, .providerError, .networkError, .paymentFailed,
        .notFound, .idempotencyConflict, .invalidRequest, .invalidState, .methodUnavailable, .sessionExpired,
        .webhookUnverified, .malformedRequest, .unauthorized, .methodNotAllowed, .payloadTooLarge,
        .unsupportedMediaType, .internalError, .storeUnavailable, .operationInProgress, .outcomeUnknown,
    ]
}
