import Foundation
import PaymentFields

/// What the Worldline simulator knows of cards: the products (Visa 1,
/// American Express 2, Mastercard 3, Worldline's ids), which product an IIN
/// belongs to, the test cards and what each does, the stored-card tokens it
/// is seeded with, and the currencies it takes.
///
/// Test cards (ours; every one passes the Luhn check):
///
/// | Card | Result |
/// |---|---|
/// | 4111111111111111, 5555555555554444, 378282246310005, any other valid card | approved |
/// | 4000000000001091, 5200000000001096 | 3-D Secure by redirect |
/// | 4000000000000515 | declined 30511001 (insufficient funds) |
/// | 4000000000003006 | declined 30051001 (declined) |
/// | 4000000000000549 | declined 30541001 (expired card) |
/// | 4000000000000341 | declined 30341001 (suspected fraud) |
/// | 4000000000000598 | declined 30591001 (suspected fraud, by the acquirer) |
/// | 4000000000000176 | declined 30171002 (the payer's time ran out) |
/// | 4000000000000960 | declined 30961001 (the issuer is unavailable: try again) |
/// | 4000000000000143 | declined 30141001 (invalid card number) |
/// | 4000000000001083 | declined 31081001 (another issuer refusal) |
/// | CVV `000` on any card | declined 30551001 (wrong CVV) |
/// | an expiry date in the past | declined 30331001 (expired card) |
///
/// The decline codes are the platform's (unofficial: a public copy of its
/// error table); their `id`s and messages are ours.
enum WorldlineCards {
    enum Outcome: Sendable, Equatable {
        case approve
        case challenge
        case decline(String)
    }

    /// The decline codes the simulator gives, with our ids and messages.
    static let declines: [String: (id: String, message: String)] = [
        "30511001": ("INSUFFICIENT_FUNDS", "Not sufficient funds"),
        "30051001": ("AUTHORIZATION_DECLINED", "Authorisation declined by the issuer"),
        "30541001": ("EXPIRED_CARD", "Expired card"),
        "30331001": ("EXPIRED_CARD", "The card's expiry date has passed"),
        "30341001": ("SUSPECTED_FRAUD", "Suspected fraud"),
        "30591001": ("SUSPECTED_FRAUD", "Suspected fraud (acquirer)"),
        "30171002": ("TIMED_OUT", "The payment was not completed in time"),
        "30961001": ("ISSUER_UNAVAILABLE", "The issuer is temporarily unavailable"),
        "30141001": ("INVALID_CARD_NUMBER", "The card number is not valid"),
        "31081001": ("AUTHORIZATION_DECLINED", "Authorisation declined by the issuer"),
        "30551001": ("INVALID_CVV", "The card security code is not correct"),
        "30891001": ("AUTHENTICATION_FAILED", "3-D Secure authentication failed"),
        "30171001": ("CANCELLED_BY_CUSTOMER", "The customer cancelled the payment"),
    ]

    /// A decline as an `APIError` (402, a payment platform error).
    static func declineIssue(_ code: String) -> WorldlineWire.Issue {
        let known: (id: String, message: String) = declines[code] ?? (id: "AUTHORIZATION_DECLINED", message: "Authorisation declined")
        return WorldlineWire.Issue(errorCode: code, id: known.id, category: "PAYMENT_PLATFORM_ERROR", message: known.message,
                                   httpStatusCode: 402)
    }

    /// What card `digits` (with `cvv`, if given) does.
    static func outcome(of digits: String, cvv: String?) -> Outcome {
        if cvv == "000" { return .decline("30551001") }
        switch digits {
        case "4000000000001091", "5200000000001096": return .challenge
        case "4000000000000515": return .decline("30511001")
        case "4000000000003006": return .decline("30051001")
        case "4000000000000549": return .decline("30541001")
        case "4000000000000341": return .decline("30341001")
        case "4000000000000598": return .decline("30591001")
        case "4000000000000176": return .decline("30171002")
        case "4000000000000960": return .decline("30961001")
        case "4000000000000143": return .decline("30141001")
        case "4000000000001083": return .decline("31081001")
        default: return .approve
        }
    }

    /// The stored cards every merchant has (ours): an approved Visa and a Visa asking for 3-D Secure.
    static let tokens: [String: (card: WorldlineCard, outcome: Outcome)] = [
        "sandbox-token-visa": (WorldlineCard(productId: 1, bin: "411111", last4: "1111", length: 16, expiry: "1230",
                                             token: "sandbox-token-visa"), .approve),
        "sandbox-token-3ds": (WorldlineCard(productId: 1, bin: "400000", last4: "1091", length: 16, expiry: "1230",
                                            token: "sandbox-token-3ds"), .challenge),
    ]

    /// The product of an IIN (at least its first digits): Visa `4`,
    /// American Express `34` and `37`, Mastercard `51`–`55` and `2221`–`2720`.
    static func productId(ofIIN digits: String) -> Int? {
        if digits.hasPrefix("4") { return 1 }
        if digits.hasPrefix("34") || digits.hasPrefix("37") { return 2 }
        if let two = Int(digits.prefix(2)), (51...55).contains(two) { return 3 }
        if digits.count >= 4, let four = Int(digits.prefix(4)), (2221...2720).contains(four) { return 3 }
        return nil
    }

    /// The card number lengths of each product.
    static func lengths(of productId: Int) -> ClosedRange<Int> { productId == 2 ? 15...15 : 13...19 }


    /// Whether `mmyy` is a month and year (`MMYY`, or `MMYYYY` taken as its `MMYY`).
    static func expiry(_ text: String) -> String? {
        guard text.range(of: #"^(0[1-9]|1[0-2])([0-9]{2}|20[0-9]{2})$"#, options: .regularExpression) != nil else { return nil }
        return String(text.prefix(2)) + String(text.suffix(2))
    }

    /// Whether the card's last valid month (`MMYY`) has passed.
    static func expired(_ mmyy: String, now: Date = Date()) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let today = calendar.dateComponents([.year, .month], from: now)
        guard let month = Int(mmyy.prefix(2)), let year = Int(mmyy.suffix(2)).map({ 2000 + $0 }),
              let thisYear = today.year, let thisMonth = today.month else { return true }
        return year < thisYear || (year == thisYear && month < thisMonth)
    }

    /// The currencies the simulator takes, with their minor-unit exponents (ISO 4217).
    static let currencies: [String: Int] = [
        "EUR": 2, "USD": 2, "GBP": 2, "SEK": 2, "DKK": 2, "NOK": 2, "CHF": 2, "PLN": 2, "CZK": 2, "HUF": 2, "CAD": 2, "AUD": 2,
        "SAR": 2, "AED": 2, "QAR": 2, "EGP": 2, "JPY": 0, "KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3,
    ]

    /// `amount` minor units of `currency` for people: `150.000 KWD`.
    static func display(_ amount: Int64, _ currency: String) -> String {
        let exponent = currencies[currency] ?? 2
        guard exponent > 0 else { return "\(amount) \(currency)" }
        var divisor: Int64 = 1
        for _ in 0..<exponent { divisor *= 10 }
        let minor = String(amount % divisor)
        return "\(amount / divisor).\(String(repeating: "0", count: exponent - minor.count))\(minor) \(currency)"
    }
}
