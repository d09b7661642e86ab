/// The OPPWA result codes the HyperPay simulator answers with, each with the
/// description OPPWA gives it. An adapter classifies them by the documented
/// patterns (success `^(000\.000\.|000\.100\.1|000\.[36])`, review
/// `^(000\.400\.0[^3]|000\.400\.100)`, pending `^(000\.200)`, pending for days
/// `^(800\.400\.5|100\.400\.500)`, anything else a failure).
public enum HyperPayResultCode {
    public static let checkoutCreated = "000.200.100"
    public static let success = "000.100.110"
    public static let review = "000.400.000"
    public static let pending = "000.200.000"
    public static let pendingForDays = "800.400.500"
    public static let invalidCard = "800.100.151"
    public static let amountExceedsCredit = "800.100.155"
    public static let throttled = "800.120.100"
    public static let cancelledByUser = "100.396.101"
    public static let authenticationFailed = "100.380.401"
    public static let notConfiguredForBrand = "600.200.500"
    public static let invalidParameter = "200.300.404"
    public static let invalidAuthentication = "800.900.300"
    public static let cannotCapture = "700.400.100"
    public static let cannotRefund = "700.400.200"
    public static let cannotReverse = "700.400.300"
    public static let invalidReferenceType = "700.300.100"
    public static let communicationError = "900.100.100"
    public static let successfulRequest = "000.000.100"
    /// The transaction reports hold nothing under the id asked for.
    public static let transactionNotFound = "700.400.580"

    /// The description of each code above.
    public static let descriptions: [String: String] = [
        checkoutCreated: "successfully created checkout",
        success: "Request successfully processed in 'Merchant in Integrator Test Mode'",
        review: "Request successfully processed, but the transaction should be manually reviewed",
        pending: "transaction pending",
        pendingForDays: "waiting for confirmation of non-instant payment. Denied for now.",
        invalidCard: "invalid card number",
        amountExceedsCredit: "amount exceeds credit",
        throttled: "Rejected by Throttling.",
        cancelledByUser: "Transaction cancelled by user",
        authenticationFailed: "User Authentication Failed",
        notConfiguredForBrand: "Invalid payment data. You are not configured for this currency or sub type (country or brand)",
        invalidParameter: "invalid or missing parameter",
        invalidAuthentication: "invalid authentication information",
        cannotCapture: "cannot capture (PA value exceeded, PA reverted or invalid workflow?)",
        cannotRefund: "cannot refund (refund volume exceeded or tx reversed or invalid workflow?)",
        cannotReverse: "cannot reverse (already refunded|reversed, invalid workflow or amount exceeded)",
        invalidReferenceType: "referenced tx can not be refunded, captured or reversed (invalid type)",
        communicationError: "unexpected communication error with connector/acquirer",
        successfulRequest: "successful request",
        transactionNotFound: "cannot find transaction",
    ]

    /// Codes a sandbox completion may ask for with `sandbox_code=` (the
    /// results of a processed payment, not of a malformed request).
    public static let payable: Set<String> = [
        success, review, pending, pendingForDays, invalidCard, amountExceedsCredit, throttled,
        cancelledByUser, authenticationFailed,
    ]

    /// Whether `code` means the money moved (success, or success needing review).
    static func moved(_ code: String) -> Bool {
        code.hasPrefix("000.000.") || code.hasPrefix("000.100.1") || code.hasPrefix("000.3") || code.hasPrefix("000.6")
            || (code.hasPrefix("000.400.0") && !code.hasPrefix("000.400.03")) || code == "000.400.100"
    }
}
