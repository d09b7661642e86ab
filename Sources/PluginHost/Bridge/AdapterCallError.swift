import Foundation

/// Why an invoke did not produce a result document.
public enum AdapterCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `invoke` refused the call before sending anything.
    case refused(ABIStatus, message: String)
    /// The adapter completed with a non-OK status.
    case failed(ABIStatus, message: String)
    /// No completion in time. Outcome unknown.
    case timedOut
    /// The caller stopped waiting. Outcome unknown.
    case cancelled
    /// The adapter's runner process ended with the call in flight. Outcome unknown.
    case connectionLost(String)
    /// The completion's document does not match the operation's result schema.
    case malformedResult(String)

    /// True when the provider may have acted although no result arrived: the
    /// payment must be reconciled with `verify`, never retried elsewhere.
    /// Fail closed: only a refusal or completion whose status the header
    /// documents as "nothing was sent" is not unknown.
    public var outcomeUnknown: Bool {
        switch self {
        case .timedOut, .cancelled, .connectionLost, .malformedResult: true
        case .refused(let status, _), .failed(let status, _): !status.provesNothingSent
        }
    }

    public var description: String {
        switch self {
        case .refused(let s, let m): "refused (\(s)): \(m)"
        case .failed(let s, let m): "failed (\(s)): \(m)"
        case .timedOut: "timed out: outcome unknown"
        case .cancelled: "cancelled: outcome unknown"
        case .connectionLost(let reason): "the adapter's process was lost (\(reason)): outcome unknown"
        case .malformedResult(let m): "malformed result: \(m)"
        }
    }
}
