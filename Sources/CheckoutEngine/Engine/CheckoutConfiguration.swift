import Foundation
import PaymentFields

/// The engine's knobs, with production defaults.
public struct CheckoutConfiguration: Sendable {
    /// How long an unpaid session accepts attempts.
    public var sessionLifetime: TimeInterval = 30 * 60
    /// Added to a provider's call timeout to make the lease of an attempt in
    /// flight. It covers the commit that precedes the call (a store under load
    /// waits for its group commit, milliseconds), so that no other
    /// process takes the attempt for abandoned while its call is still running.
    public var leaseMargin: TimeInterval = 5
    /// Reconciliation's verify schedule for a pending attempt: the n-th verify
    /// waits `reconcileBackoff[n]` seconds (the last entry repeats forever).
    public var reconcileBackoff: [TimeInterval] = [1, 2, 4, 8, 15, 30, 60, 120, 300, 600, 1800, 3600]
    /// Consecutive provider failures that open its circuit, and for how long.
    public var breakerThreshold = 5
    public var breakerCooldown: Duration = .seconds(30)
    /// The longest session creation waits for providers to list the payer's
    /// instruments; a provider slower than this contributes nothing.
    public var instrumentsTimeout: Duration = .seconds(2)
    /// The card ranges an IIN lookup reads (`POST /v1/sessions/{id}/iin`):
    /// the shipped data file unless a caller gives its own.
    public var cardRanges: Result<IINRanges, IINRangesError> = IINRanges.shipped

    public init() {}

    func backoff(after checks: Int) -> TimeInterval {
        reconcileBackoff.isEmpty ? 60 : reconcileBackoff[min(checks, reconcileBackoff.count - 1)]
    }
}
