import Foundation

/// When a failed delivery is tried again: exponential back-off with jitter.
///
/// Try `n` (1 for the first retry) waits `first × 2^(n-1)`, at most
/// `longest`, each wait drawn at random between half of it and all of it
/// (so endpoints that failed together do not all come back in the same
/// second). With the defaults (5 seconds doubling to at most 6 hours) the
/// ceilings run 5 s, 10 s, 20 s, ... 5.7 h, then 6 hours: 16 to 20 tries in
/// the first day, 24 to 36 in three days. An endpoint whose deliveries
/// have failed for longer than `window` (3 days) is disabled, its events
/// kept for when ops enable it again (docs/webhooks.md "Retries").
public struct RetrySchedule: Sendable, Equatable {
    public var first: Duration
    public var longest: Duration
    public var window: Duration

    public static let standard = RetrySchedule(first: .seconds(5), longest: .seconds(6 * 3600), window: .seconds(3 * 86_400))

    public init(first: Duration, longest: Duration, window: Duration) {
        precondition(first > .zero && longest >= first && window > .zero, "a retry schedule waits a positive time, at most its longest, within a positive window")
        self.first = first
        self.longest = longest
        self.window = window
    }

    /// The wait before retry `retry` (1, 2, ...), before jitter.
    public func ceiling(_ retry: Int) -> Duration {
        let doublings = min(max(retry - 1, 0), 40)
        let seconds = min(first.seconds * pow(2, Double(doublings)), longest.seconds)
        return .milliseconds(Int64(seconds * 1000))
    }

    /// The wait before retry `retry`, with jitter: between half the
    /// ceiling and all of it.
    public func delay(_ retry: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceiling(retry).seconds
        return .milliseconds(Int64(Double.random(in: ceiling / 2 ... ceiling, using: &generator) * 1000))
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
