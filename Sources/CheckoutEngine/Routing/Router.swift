import GatewayPayloads

/// Which providers may take a payment, in the order to try them, and why.
public struct RoutingDecision: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        public var providerID: String
        /// Why it was chosen, kept on the attempt for audit.
        public var reason: String
    }

    public var candidates: [Candidate]
    /// Providers left out, each with the reason.
    public var excluded: [(providerID: String, reason: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.candidates == b.candidates && a.excluded.map(\.providerID) == b.excluded.map(\.providerID)
            && a.excluded.map(\.reason) == b.excluded.map(\.reason)
    }
}

/// Picks candidates: enabled providers whose manifest matches the method,
/// currency, country, amount and capture mode, lowest priority first (ties by
/// id, so the order is stable), skipping providers whose breaker is open.
public enum Router {
    public static func route(
        method: String, amount: Money, country: String?, capture: CaptureMode, pinnedProvider: String? = nil,
        profiles: [ProviderProfile], breakerState: (String) -> CircuitBreaker.State = { _ in .closed }
    ) -> RoutingDecision {
        var candidates: [RoutingDecision.Candidate] = []
        var excluded: [(String, String)] = []
        let ordered = profiles.sorted { ($0.priority, $0.id) < ($1.priority, $1.id) }
        for (rank, profile) in ordered.enumerated() {
            if let pinnedProvider, profile.id != pinnedProvider {
                excluded.append((profile.id, "not the pinned provider \(pinnedProvider)"))
                continue
            }
            if let refusal = profile.refusal(method: method, amount: amount, country: country, capture: capture) {
                excluded.append((profile.id, refusal))
                continue
            }
            let breaker = breakerState(profile.id)
            if breaker == .open {
                excluded.append((profile.id, "circuit open after repeated failures"))
                continue
            }
            var reason = pinnedProvider != nil
                ? "pinned by the request"
                : "priority \(profile.priority) (rank \(rank + 1) of \(ordered.count)) for \(method) in \(amount.currency)"
            if breaker == .halfOpen { reason += "; circuit half-open: this call is the probe" }
            candidates.append(.init(providerID: profile.id, reason: reason))
        }
        return RoutingDecision(candidates: candidates, excluded: excluded)
    }
}
