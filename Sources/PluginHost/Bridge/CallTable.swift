import Foundation
import Synchronization

/// How one invoke ended, as seen by the host.
public enum CallOutcome: Sendable, Equatable {
    /// The adapter completed the call: `status` is its `gw_status`, `payload`
    /// its result document (on `GW_OK`) or error document.
    case completed(status: Int32, payload: Data)
    /// `invoke` returned `status` without accepting the call: nothing was sent.
    case refused(status: Int32)
    /// No completion before the deadline; the adapter was told to cancel. The
    /// provider may or may not have acted: the outcome is unknown.
    case timedOut
    /// The caller stopped waiting; the adapter was told to cancel. Unknown outcome.
    case cancelled
    /// The adapter's process ended (crashed, exited, was killed) while the
    /// call was in flight. The provider may or may not have acted: unknown.
    case lost(reason: String)
}

/// A completion the adapter should not have sent.
public struct ProtocolViolation: Sendable, Hashable, CustomStringConvertible {
    public var callID: UInt64
    public var detail: String
    public var description: String { "call \(callID): \(detail)" }
}

/// The calls in flight on one adapter instance, and the guarantee that each
/// resolves exactly once: whichever of completion, refusal, timeout or cancel
/// removes a call from the table first resolves it; every later arrival finds
/// it gone. A completion for a call the host gave up on (timeout, cancel) is
/// expected and dropped; any other stray completion is a protocol violation.
final class CallTable: Sendable {
    private struct Pending: Sendable {
        var continuation: UnsafeContinuation<CallOutcome, Never>
        /// When the call times out (``DeadlineSweeper/now()`` nanoseconds).
        var deadline: UInt64
    }

    private struct State {
        var pending: [UInt64: Pending] = [:]
        /// Calls the host stopped waiting for whose completion has not come yet.
        var abandoned: Set<UInt64> = []
        var violations: [ProtocolViolation] = []
        var violationCount = 0
    }

    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(1)
    private let onViolation: @Sendable (ProtocolViolation) -> Void
    /// Tells the adapter to cancel a call that timed out (set by its instance).
    private let timeoutAction = CallbackSlot<UInt64>()
    private let watcher = CallbackSlot<UInt64>()
    private let sweeper = DeadlineSweeper.shared

    init(onViolation: @escaping @Sendable (ProtocolViolation) -> Void) {
        self.onViolation = onViolation
        sweeper.register(self)
    }

    /// What to do with a call that timed out, besides resolving it. It runs
    /// on the deadline sweeper's thread, so it must not call into the adapter
    /// (its instance queues the cancel).
    func onTimeout(_ action: @escaping @Sendable (UInt64) -> Void) {
        timeoutAction.set(action)
    }

    /// A check the sweeper runs on every pass (with the monotonic time): the
    /// instance's report of host calls that block.
    func watch(_ check: @escaping @Sendable (UInt64) -> Void) {
        watcher.set(check)
    }

    /// Runs the instance's check (see ``watch(_:)``).
    func runWatch(now: UInt64) {
        watcher(now)
    }

    /// A call id never used before on this instance.
    func makeCallID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).oldValue
    }

    /// The id the last call was given (0 before any).
    var lastIssuedID: UInt64 { nextID.load(ordering: .relaxed) - 1 }

    /// Registers a call before the adapter can possibly complete it.
    /// It times out `timeout` nanoseconds from now, unless resolved first.
    func register(_ callID: UInt64, continuation: UnsafeContinuation<CallOutcome, Never>, timeout: UInt64) {
        let pending = Pending(continuation: continuation, deadline: DeadlineSweeper.now() &+ timeout)
        state.withLock { $0.pending[callID] = pending }
        sweeper.callStarted()
    }

    /// Resolves as timed out every call due by `now` (the sweeper's tick),
    /// and has the adapter cancel them.
    func timeOutCalls(dueBy now: UInt64) {
        let due = state.withLock { state -> [UInt64] in
            guard !state.pending.isEmpty else { return [] }
            return state.pending.compactMap { $0.value.deadline <= now ? $0.key : nil }
        }
        guard !due.isEmpty else { return }
        for callID in due where resolve(callID, with: .timedOut) {
            timeoutAction(callID)
        }
    }

    /// The adapter's `complete(call_id, ...)`.
    func complete(callID: UInt64, status: Int32, payload: Data) {
        enum Found { case pending(Pending), abandoned, stray(Int) }
        let found: Found = state.withLock { state in
            if let pending = state.pending.removeValue(forKey: callID) { return .pending(pending) }
            if state.abandoned.remove(callID) != nil { return .abandoned }
            state.violationCount += 1
            return .stray(state.violationCount)
        }
        switch found {
        case .pending(let pending):
            sweeper.callEnded()
            pending.continuation.resume(returning: .completed(status: status, payload: payload))
        case .abandoned:
            break
        case .stray:
            record(ProtocolViolation(
                callID: callID,
                detail: callID == 0 || callID >= nextID.load(ordering: .relaxed)
                    ? "completion for a call id the host never issued"
                    : "second completion for a call that had already completed"))
        }
    }

    /// A violation that concerns no call (call id 0): a host service used
    /// when it may not be.
    func report(_ detail: String) {
        state.withLock { $0.violationCount += 1 }
        record(ProtocolViolation(callID: 0, detail: detail))
    }

    private func record(_ violation: ProtocolViolation) {
        state.withLock { if $0.violations.count < 100 { $0.violations.append(violation) } }
        onViolation(violation)
    }

    /// Resolves a call on the host's side (refusal, timeout, cancel). Returns
    /// false when the call had already resolved.
    @discardableResult
    func resolve(_ callID: UInt64, with outcome: CallOutcome) -> Bool {
        let pending: Pending? = state.withLock { state in
            guard let pending = state.pending.removeValue(forKey: callID) else { return nil }
            // After a refusal no completion may come; after a timeout or cancel one still must.
            if outcome == .timedOut || outcome == .cancelled { state.abandoned.insert(callID) }
            return pending
        }
        guard let pending else { return false }
        sweeper.callEnded()
        pending.continuation.resume(returning: outcome)
        return true
    }

    /// `invoke` refused `callID` (so no completion will come): resolves it if it
    /// is still pending, and forgets it if its deadline had already abandoned it.
    func refused(_ callID: UInt64, status: Int32) {
        if !resolve(callID, with: .refused(status: status)) {
            _ = state.withLock { $0.abandoned.remove(callID) }
        }
    }

    /// Resolves every pending call as cancelled (shutdown); returns their ids,
    /// which the adapter must now be told to cancel.
    func cancelAll() -> [UInt64] {
        let ids = state.withLock { Array($0.pending.keys) }
        return ids.filter { resolve($0, with: .cancelled) }
    }

    /// The adapter's process is gone: every pending call resolves as lost
    /// (outcome unknown), and the completions it owed for abandoned calls will
    /// never come. Returns how many calls were in flight.
    @discardableResult
    func connectionLost(_ reason: String) -> Int {
        let (pending, _) = state.withLock { state -> ([UInt64], Int) in
            let abandoned = state.abandoned.count
            state.abandoned.removeAll()
            return (Array(state.pending.keys), abandoned)
        }
        return pending.filter { resolve($0, with: .lost(reason: reason)) }.count
    }

    /// Whether the host gave up on `callID` (deadline, cancel) and the adapter
    /// still owes its completion.
    func isAbandoned(_ callID: UInt64) -> Bool {
        state.withLock { $0.abandoned.contains(callID) }
    }

    /// Calls waiting for a completion, including abandoned ones the adapter still owes.
    var outstanding: Int { state.withLock { $0.pending.count + $0.abandoned.count } }

    /// Completions the adapter sent that it should not have.
    var violations: (count: Int, first: [ProtocolViolation]) {
        state.withLock { ($0.violationCount, $0.violations) }
    }
}
