import GatewayPayloads

/// The sandbox's pre-scoring: which buyers and amounts Tabby turns down at
/// `POST /api/v2/checkout` (HTTP 200, `status: "rejected"`).
///
/// From Tabby's documented test data:
/// - `otp.rejected@tabby.ai`, or the phones +971500000002, +966500000002 and
///   +96590000002 (any spelling: local, with or without `+`): rejected,
///   `not_available`;
/// - `otp.success@tabby.ai` and +971500000001, +966500000001, +96590000001:
///   approved (so is any other buyer).
///
/// Amount limits (minor units, every currency): below 100 (1.00 SAR or AED,
/// 0.100 KWD) `order_amount_too_low`, above 500000 (5000.00 SAR or AED,
/// 500.000 KWD) `order_amount_too_high`.
enum TabbyPreScoring {
    static let rejectedEmails: Set<String> = ["otp.rejected@tabby.ai"]
    static let minimum: Int64 = 100
    static let maximum: Int64 = 500_000

    /// The rejection reason for this buyer and amount, or nil when approved.
    static func rejection(buyer: TabbyWire.Buyer, amount: Money) -> String? {
        if amount.value < minimum { return "order_amount_too_low" }
        if amount.value > maximum { return "order_amount_too_high" }
        if let email = buyer.email?.lowercased(), rejectedEmails.contains(email) { return "not_available" }
        let digits = String((buyer.phone ?? "").filter { $0.isASCII && $0.isNumber })
        if digits.hasSuffix("500000002") || digits == "96590000002" || digits == "90000002" { return "not_available" }
        return nil
    }
}
