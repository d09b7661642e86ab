import Foundation
import Synchronization

/// The calls into one in-process adapter that the host makes on its own
/// initiative (today its `cancel`s: of a call past its deadline, of a call
/// whose caller went away, of the calls left at shutdown), run one at a time
/// on a thread of that adapter's own.
///
/// So no other thread ever waits on this adapter's code: the deadline sweeper
/// (which fires every adapter's deadlines) only queues a cancel, and an
/// adapter whose `cancel` blocks stops nothing but its own later cancels.
/// The thread starts with the first job and ends when the queue is stopped
/// and empty.
///
/// A job that runs longer than ``blockedBound`` is counted and logged once, by
/// ``checkBlocked(now:)`` (the sweeper calls it); in-process isolation can do
/// no more than that for an adapter that blocks, and the log says so.
final class AdapterCallQueue: @unchecked Sendable {
    /// How long a cancel may run before the adapter is reported as blocking
    /// (documented in docs/plugin-authors.md: cancel must return at once).
    static let blockedBound: UInt64 = 1_000_000_000

    private struct State {
        var jobs: [(name: String, run: @Sendable () -> Void)] = []
        var head = 0
        var running = false
        var stopped = false
        var threadStarted = false
        /// The job on the thread now, and since when (monotonic ns).
        var current: (name: String, since: UInt64, reported: Bool)?
        var blocked = 0
    }

    let label: String
    private let state = Mutex(State())
    private let ready = NSCondition()
    private let onBlocked: @Sendable (_ job: String, _ for: UInt64) -> Void

    init(label: String, onBlocked: @escaping @Sendable (_ job: String, _ for: UInt64) -> Void) {
        self.label = label
        self.onBlocked = onBlocked
    }

    /// Queues `job` (never runs it on the caller's thread). Ignored once stopped.
    func enqueue(_ name: String, _ job: @escaping @Sendable () -> Void) {
        let startThread: Bool = state.withLock { state in
            guard !state.stopped else { return false }
            state.jobs.append((name, job))
            defer { state.threadStarted = true }
            return !state.threadStarted
        }
        if startThread {
            let thread = Thread { [self] in run() }
            thread.name = label
            thread.start()
        }
        ready.lock()
        ready.signal()
        ready.unlock()
    }

    /// No more jobs: the thread ends once those queued have run.
    func stop() {
        state.withLock { $0.stopped = true }
        ready.lock()
        ready.broadcast()
        ready.unlock()
    }

    /// Jobs that ran longer than ``blockedBound`` (each counted once).
    var blockedCount: Int { state.withLock { $0.blocked } }

    /// Whether nothing is queued or running.
    var isIdle: Bool { state.withLock { $0.current == nil && $0.head == $0.jobs.count } }

    /// Reports the running job once it has run longer than ``blockedBound``.
    func checkBlocked(now: UInt64) {
        let report: (String, UInt64)? = state.withLock { state in
            // `now` was read before the pass: a job that began since is not late.
            guard let current = state.current, !current.reported, now > current.since, now - current.since > Self.blockedBound else { return nil }
            state.current?.reported = true
            state.blocked += 1
            return (current.name, now &- current.since)
        }
        if let (name, elapsed) = report { onBlocked(name, elapsed) }
    }

    private func run() {
        while true {
            let next: (name: String, run: @Sendable () -> Void)? = state.withLock { state in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                state.current = (job.name, DeadlineSweeper.now(), false)
                return job
            }
            if let next {
                next.run()
                state.withLock { $0.current = nil }
                continue
            }
            ready.lock()
            let done = state.withLock { $0.stopped && $0.head == $0.jobs.count }
            if done {
                ready.unlock()
                return
            }
            let empty = state.withLock { $0.head == $0.jobs.count }
            if empty { _ = ready.wait(until: Date(timeIntervalSinceNow: 1)) }
            ready.unlock()
        }
    }
}
