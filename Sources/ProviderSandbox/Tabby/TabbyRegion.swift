/// Tabby's two API hosts: `api.tabby.sa` (Saudi Arabia, SAR) and
/// `api.tabby.ai` (United Arab Emirates AED, Kuwait KWD). The simulator
/// serves each under its own sub-prefix (`/tabby/sa/…`, `/tabby/ai/…`); a
/// checkout or payment of the other region is answered 403 `no_permission`,
/// as the wrong host does.
enum TabbyRegion: String, Sendable, CaseIterable {
    case sa
    case ai

    /// The region whose host takes `currency`, or nil for a currency Tabby does not take.
    init?(currency: String) {
        switch currency {
        case "SAR": self = .sa
        case "AED", "KWD": self = .ai
        default: return nil
        }
    }

    var host: String { self == .sa ? "api.tabby.sa" : "api.tabby.ai" }
}
