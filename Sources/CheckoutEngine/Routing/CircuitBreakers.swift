import Synchronization

/// Every provider's ``CircuitBreaker``, under one lock, made on first use
/// with the engine's threshold and cooldown. What counts as a failure is
/// the engine's rule (``Checkout``'s `record(_:for:)`); this only counts.
final class CircuitBreakers: Sendable {
    private let breakers = Mutex<[String: CircuitBreaker]>([:])
    private let threshold: Int
    private let cooldown: Duration

    init(threshold: Int, cooldown: Duration) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    func state(of providerID: String, at: ContinuousClock.Instant) -> CircuitBreaker.State {
        breakers.withLock { $0[providerID]?.state(at: at) ?? .closed }
    }

    /// Whether a call to `providerID` may go through now (taking the
    /// half-open probe slot when it is the one).
    func allow(_ providerID: String) -> Bool {
        let at = ContinuousClock.now
        return update(providerID) { $0.allow(at: at) }
    }

    /// Gives back a half-open probe slot taken for a call that was never made.
    func releaseProbe(_ providerID: String) {
        breakers.withLock { $0[providerID]?.releaseProbe() }
    }

    func record(healthy: Bool, for providerID: String) {
        let at = ContinuousClock.now
        update(providerID) { breaker in
            if healthy { breaker.recordSuccess() } else { breaker.recordFailure(at: at) }
        }
    }

    /// Each provider's circuit now.
    func states() -> [String: CircuitBreaker.State] {
        let at = ContinuousClock.now
        return breakers.withLock { $0.mapValues { $0.state(at: at) } }
    }

    @discardableResult
    private func update<T>(_ providerID: String, _ change: (inout CircuitBreaker) -> T) -> T {
        breakers.withLock { all in
            var breaker = all[providerID] ?? CircuitBreaker(threshold: threshold, cooldown: cooldown)
            let result = change(&breaker)
            all[providerID] = breaker
            return result
        }
    }
}
