import CheckoutEngine
import Synchronization

/// The sessions as this host's recent commits left them, so that a delivery
/// carries the session as it stood right after its event: the state a
/// commit left is the state after each of the events it wrote.
///
/// Kept only while some endpoint wants events (``wanted``), at most
/// ``capacity`` commits (then forgotten all at once: fan-out normally reads
/// them within milliseconds of the commit). An event this memory does not
/// cover (committed by another host, before a restart, or forgotten) gets
/// its session as read when it is queued, a moment later at most.
final class CommittedStates: Sendable {
    static let capacity = 4096

    private struct State {
        /// Per session, each remembered commit's last event number and the session it left, oldest first.
        var commits: [String: [(last: Int64, session: Session)]] = [:]
        var count = 0
    }

    private let state = Mutex(State())
    private let wantedFlag = Atomic(false)

    /// Whether any endpoint receives events (set by each fan-out round).
    var wanted: Bool {
        get { wantedFlag.load(ordering: .relaxed) }
        set { wantedFlag.store(newValue, ordering: .relaxed) }
    }

    /// Remembers `session` as the commit that wrote `events` left it.
    func remember(_ session: Session, events: [SessionEvent]) {
        var last: Int64 = 0
        for event in events where event.sessionID == session.id { last = max(last, event.sequence) }
        guard last > 0 else { return }
        state.withLock { state in
            if state.count >= Self.capacity {
                state.commits.removeAll(keepingCapacity: true)
                state.count = 0
            }
            state.commits[session.id, default: []].append((last, session))
            state.count += 1
        }
    }

    /// The session right after its event `number`, when remembered.
    func session(_ id: String, after number: Int64) -> Session? {
        state.withLock { state in state.commits[id]?.first { $0.last >= number }?.session }
    }
}
