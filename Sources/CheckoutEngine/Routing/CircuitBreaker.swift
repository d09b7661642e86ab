/// A circuit breaker for one provider: after `threshold` consecutive failures
/// it opens (the provider is skipped) for `cooldown`; then it half-opens and
/// lets one call through: a success closes it, a failure opens it again.
/// A value type: the caller keeps it, with a clock, under its own lock.
public struct CircuitBreaker: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case closed, open
        case halfOpen = "half_open"
    }

    public let threshold: Int
    public let cooldown: Duration
    public private(set) var consecutiveFailures = 0
    private var openedAt: ContinuousClock.Instant?
    private var probeInFlight = false

    public init(threshold: Int = 5, cooldown: Duration = .seconds(30)) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    /// The state at `now`.
    public func state(at now: ContinuousClock.Instant) -> State {
        guard let openedAt else { return .closed }
        return now - openedAt >= cooldown ? .halfOpen : .open
    }

    /// Whether a call may go through at `now` (taking the half-open probe slot).
    public mutating func allow(at now: ContinuousClock.Instant) -> Bool {
        switch state(at: now) {
        case .closed: return true
        case .open: return false
        case .halfOpen:
            guard !probeInFlight else { return false }
            probeInFlight = true
            return true
        }
    }

    /// The probe slot taken by ``allow(at:)`` was not used (the call was never made).
    public mutating func releaseProbe() {
        probeInFlight = false
    }

    /// A call reached the provider and got an answer (a decline counts: the provider works).
    public mutating func recordSuccess() {
        consecutiveFailures = 0
        openedAt = nil
        probeInFlight = false
    }

    /// The provider failed (error, timeout, dropped connection).
    public mutating func recordFailure(at now: ContinuousClock.Instant) {
        consecutiveFailures += 1
        probeInFlight = false
        if openedAt != nil || consecutiveFailures >= threshold { openedAt = now }
    }
}
