import Synchronization

/// The `invoke` calls running inside one in-process adapter right now, so
/// that one that does not return is seen.
///
/// `invoke` runs on the caller's thread (one of Swift concurrency's few) and
/// must return at once, finishing its work elsewhere (docs/plugin-authors.md).
/// One that blocks holds that thread: in process the host cannot take it back,
/// but it must not be silent. The deadline sweeper calls ``checkBlocked(now:)``
/// on every pass; an invoke past ``AdapterCallQueue/blockedBound`` is counted
/// and reported once.
final class InvokeWatch: Sendable {
    private struct State {
        /// Call id → when its invoke began (monotonic ns), and whether reported.
        var running: [UInt64: (since: UInt64, reported: Bool)] = [:]
        var blocked = 0
    }

    private let state = Mutex(State())
    private let onBlocked: @Sendable (_ callID: UInt64, _ for: UInt64) -> Void

    init(onBlocked: @escaping @Sendable (_ callID: UInt64, _ for: UInt64) -> Void) {
        self.onBlocked = onBlocked
    }

    /// Runs `invoke` (the call into the adapter) under watch.
    func watching<T>(_ callID: UInt64, _ invoke: () -> T) -> T {
        let since = DeadlineSweeper.now()
        state.withLock { _ = $0.running.updateValue((since, false), forKey: callID) }
        defer { state.withLock { _ = $0.running.removeValue(forKey: callID) } }
        return invoke()
    }

    /// Whether an invoke is running in the adapter now.
    var isRunning: Bool { state.withLock { !$0.running.isEmpty } }

    /// Invokes that ran longer than the bound (each counted once).
    var blockedCount: Int { state.withLock { $0.blocked } }

    /// Reports every invoke running longer than the bound, once each.
    func checkBlocked(now: UInt64) {
        let late: [(UInt64, UInt64)] = state.withLock { state in
            guard !state.running.isEmpty else { return [] }
            var late: [(UInt64, UInt64)] = []
            // `now` was read before the pass: an invoke that began since is not late.
            for (callID, entry) in state.running where !entry.reported && now > entry.since && now - entry.since > AdapterCallQueue.blockedBound {
                state.running[callID]?.reported = true
                late.append((callID, now &- entry.since))
            }
            state.blocked += late.count
            return late
        }
        for (callID, elapsed) in late { onBlocked(callID, elapsed) }
    }
}
