import Foundation

/// How the host reaches one adapter instance: the transport below
/// ``AdapterInstance``, which keeps everything both runtimes share (call ids,
/// the call table with its deadlines and exactly-once resolution, the result
/// decoding, shutdown's order).
///
/// Two runtimes implement it: ``InProcessConnection`` (the libffi bridge into a
/// library mapped in the host) and ``RunnerConnection`` (the same bridge inside
/// a `gateway-runner` process, reached by frames over a socket pair). Either
/// reports completions, refusals after the fact and a lost connection to the
/// instance's call table, never to the caller.
package protocol AdapterConnection: AnyObject, Sendable {
    var isolation: Manifest.Isolation { get }

    /// Starts call `callID`, already registered in the call table. Returns
    /// `GW_OK` when the adapter accepted it (its completion will reach the
    /// table) or the refusal status (nothing was sent; no completion follows).
    /// `timeout` is the call's deadline from now, in nanoseconds.
    func invoke(_ callID: UInt64, _ operation: Int32, _ payload: UnsafeRawBufferPointer, timeout: UInt64) -> Int32

    /// Tells the adapter to cancel `callID`. Returns at once: it never runs
    /// adapter code on the caller's thread (the caller may be the deadline sweeper).
    func cancel(_ callID: UInt64)

    /// Calls into the adapter that ran longer than the documented bound.
    var blockedCalls: Int { get }

    /// Destroys the instance; called once every call on it has resolved and
    /// no completion is owed. Returns whether it was destroyed within `grace`.
    func destroy(grace: Duration) async -> Bool

    /// Gives the instance up without destroying it (it still owes completions
    /// after cancel): in process its memory is leaked rather than freed under
    /// a running worker; a runner is killed.
    func abandon(reason: String)

    /// What ``AdapterInstance/health`` reports (ready, restarting, quarantined...).
    var health: AdapterHealth { get }
}

/// Whether an adapter instance can take calls now.
public enum AdapterHealth: Sendable, Equatable, CustomStringConvertible {
    /// Loaded and serving.
    case ready
    /// Its runner process ended; a new one starts at the given time (calls are
    /// refused with `GW_E_BUSY` meanwhile: nothing is sent).
    case restarting(attempt: Int, reason: String)
    /// Crashed too often: excluded from routing until ops re-enable it.
    case quarantined(reason: String)
    /// Shut down.
    case closed

    public var description: String {
        switch self {
        case .ready: "ready"
        case .restarting(let attempt, let reason): "restarting (attempt \(attempt)): \(reason)"
        case .quarantined(let reason): "quarantined: \(reason)"
        case .closed: "closed"
        }
    }

    /// The one-word state (`gateway providers`, `GET /v1/providers`, metrics).
    public var name: String {
        switch self {
        case .ready: "ready"
        case .restarting: "restarting"
        case .quarantined: "quarantined"
        case .closed: "closed"
        }
    }
}
