import GatewayPayloads

/// Which providers may take a payment, in the order to try them, and why.
public struct RoutingDecision: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        public var providerID: String
        /// Why it was chosen, kept on the attempt for audit.
        public var reason: String
        /// The longest a call to it can take (its profile's `callTimeout`).
        public var callTimeout: Duration = .seconds(30)
    }

    public var candidates: [Candidate]
    /// Providers left out, each with the reason.
    public var excluded: [(providerID: String, reason: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.candidates == b.candidates && a.excluded.map(\.providerID) == b.excluded.map(\.providerID)
            && a.excluded.map(\.reason) == b.excluded.map(\.reason)
    }
}

/// Picks candidates: enabled providers of the session's mode (test or live:
/// never the other) whose manifest matches the method,
/// currency, country, amount and capture mode, lowest priority first (ties by
/// id, so the order is stable), skipping providers whose breaker is open.
public enum Router {
    public static func route(
        mode: PaymentMode, method: String, amount: Money, country: String?, capture: CaptureMode, pinnedProvider: String? = nil,
        profiles: [ProviderProfile], breakerState: (String) -> CircuitBreaker.State = { _ in .closed }
    ) -> RoutingDecision {
        var eligible: [(profile: ProviderProfile, halfOpen: Bool)] = []
        var excluded: [(String, String)] = []
        let ordered = profiles.sorted { ($0.priority, $0.id) < ($1.priority, $1.id) }
        for profile in ordered {
            if let pinnedProvider, profile.id != pinnedProvider {
                excluded.append((profile.id, "not the pinned provider \(pinnedProvider)"))
                continue
            }
            if let refusal = profile.refusal(method: method, amount: amount, country: country, capture: capture, mode: mode) {
                excluded.append((profile.id, refusal))
                continue
            }
            let breaker = breakerState(profile.id)
            if breaker == .open {
                excluded.append((profile.id, "circuit open after repeated failures"))
                continue
            }
            eligible.append((profile, breaker == .halfOpen))
        }
        let candidates = eligible.enumerated().map { rank, entry in
            var reason = pinnedProvider != nil
                ? "pinned by the request"
                : "candidate \(rank + 1) of \(eligible.count) for \(method) in \(amount.currency) by priority (\(entry.profile.priority))"
            if entry.halfOpen { reason += "; circuit half-open: this call is the probe" }
            return RoutingDecision.Candidate(providerID: entry.profile.id, reason: reason, callTimeout: entry.profile.callTimeout)
        }
        return RoutingDecision(candidates: candidates, excluded: excluded)
    }
}
