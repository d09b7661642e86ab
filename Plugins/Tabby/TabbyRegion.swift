/// Tabby's two API hosts, chosen by the payment's currency and country:
/// `api.tabby.sa` for Saudi Arabia (SAR), `api.tabby.ai` for the United Arab
/// Emirates (AED) and Kuwait (KWD). The other region's host answers 403.
enum TabbyRegion: String, Sendable, CaseIterable {
    case sa
    case ai

    /// The region of `currency`, or nil for a currency Tabby does not take.
    init?(currency: String) {
        switch currency {
        case "SAR": self = .sa
        case "AED", "KWD": self = .ai
        default: return nil
        }
    }

    /// The country each currency is paid in.
    static let countryOfCurrency = ["SAR": "SA", "AED": "AE", "KWD": "KW"]

    var currencies: [String] { self == .sa ? ["SAR"] : ["AED", "KWD"] }
}
