import GatewayPayloads

/// A transition the domain refuses. Each names what was attempted and why.
public enum DomainError: Error, Sendable, Equatable, CustomStringConvertible {
    case sessionNotOpen(SessionStatus)
    case attemptInProgress(attemptID: String)
    case sessionAlreadyPaid
    case illegalAttemptTransition(from: AttemptStatus, to: AttemptStatus)
    case unknownAttempt(String)
    case notAPayment(AttemptStatus)
    case nonPositiveAmount(Int64)
    case currencyMismatch(expected: String, got: String)
    case exceedsAuthorized(requested: Int64, remaining: Int64)
    case exceedsCaptured(requested: Int64, remaining: Int64)
    case alreadyVoided
    case voidAfterCapture(captured: Int64)
    case captureOfAutomaticPayment

    public var description: String {
        switch self {
        case .sessionNotOpen(let s): "the session is \(s.rawValue) and accepts no more changes"
        case .attemptInProgress(let id): "attempt \(id) is still in progress; it must finish before another starts or the session ends"
        case .sessionAlreadyPaid: "the session is already paid"
        case .illegalAttemptTransition(let from, let to): "an attempt cannot go from \(from.rawValue) to \(to.rawValue)"
        case .unknownAttempt(let id): "no attempt \(id) in this session"
        case .notAPayment(let s): "only a succeeded or authorized attempt is a payment (this one is \(s.rawValue))"
        case .nonPositiveAmount(let v): "the amount must be positive (got \(v))"
        case .currencyMismatch(let e, let g): "the payment is in \(e), not \(g)"
        case .exceedsAuthorized(let r, let left): "cannot capture \(r): only \(left) of the authorization is left"
        case .exceedsCaptured(let r, let left): "cannot refund \(r): only \(left) of what was captured is left"
        case .alreadyVoided: "the authorization was voided"
        case .voidAfterCapture(let c): "cannot void: \(c) has already been captured (refund it instead)"
        case .captureOfAutomaticPayment: "the payment was captured automatically; there is nothing to capture"
        }
    }
}
