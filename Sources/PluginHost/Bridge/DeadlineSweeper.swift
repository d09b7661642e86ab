import Foundation
import Synchronization

/// Fires the deadlines of adapter calls, for every adapter instance in the
/// process, from one thread.
///
/// A call's deadline is a number stored with the call in its ``CallTable``:
/// starting a call costs nothing more, and a call that completes takes its
/// deadline with it. While any call is in flight, the thread wakes every
/// ``tick`` and each table times out its calls that are due (a scan of the
/// calls in flight, a few thousand at most). After a second with nothing in
/// flight it sleeps until a call starts. A deadline fires up to one tick late.
///
/// It never calls into an adapter: a timed-out call's cancel is queued on
/// that adapter's own thread (``AdapterCallQueue``), so an adapter whose
/// `cancel` blocks cannot stop the deadlines of the others. Each pass also
/// lets each instance report host calls into it that block.
///
/// (The first design armed a dispatch timer per call and cancelled it on
/// completion: an allocation, a registration with dispatch's timer thread and
/// a cancellation on every call, which showed in the checkout benchmark's
/// profile.)
final class DeadlineSweeper: @unchecked Sendable {
    static let shared = DeadlineSweeper()

    /// How often due calls are looked for while calls are in flight.
    static let tick: UInt64 = 5_000_000

    private struct WeakTable {
        weak var table: CallTable?
    }

    private let tables = Mutex<[WeakTable]>([])
    /// Calls in flight across every table (the sweeper sleeps when it is 0).
    private let inFlight = Atomic<Int>(0)
    /// Calls started, ever: a pass that sees it unchanged and nothing in
    /// flight was a quiet one.
    private let started = Atomic<UInt64>(0)
    /// Whether the thread is asleep (or about to be) for want of calls.
    private let idle = Atomic<Bool>(false)
    private let wake = NSCondition()

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "adapter-call-deadlines"
        thread.start()
    }

    /// Monotonic nanoseconds, the clock deadlines are kept in.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    func register(_ table: CallTable) {
        tables.withLock { $0.append(WeakTable(table: table)) }
    }

    /// A call started: wakes the thread if it sleeps.
    func callStarted() {
        inFlight.add(1, ordering: .sequentiallyConsistent)
        started.add(1, ordering: .relaxed)
        if idle.load(ordering: .sequentiallyConsistent) {
            wake.lock()
            idle.store(false, ordering: .sequentiallyConsistent)
            wake.signal()
            wake.unlock()
        }
    }

    /// A call left its table (completed, refused, timed out or cancelled).
    func callEnded() {
        inFlight.subtract(1, ordering: .relaxed)
    }

    /// Passes in a row with no call started or in flight before the thread
    /// sleeps (a second): while calls keep coming, a call that starts finds
    /// the thread ticking and need not wake it. (It slept as soon as a pass found nothing in
    /// flight, so a caller making one call at a time woke it on every call:
    /// a futex wake in the caller and a pass on another CPU per call.)
    static let quietPassesBeforeSleep = 200

    private func run() {
        var quietPasses = 0
        var startedBefore: UInt64 = 0
        while true {
            let now = Self.now()
            let live = tables.withLock { tables -> [CallTable] in
                tables.removeAll { $0.table == nil }
                return tables.compactMap(\.table)
            }
            for table in live {
                table.timeOutCalls(dueBy: now)
                table.runWatch(now: now)
            }
            let startedNow = started.load(ordering: .relaxed)
            quietPasses = inFlight.load(ordering: .relaxed) > 0 || startedNow != startedBefore ? 0 : quietPasses + 1
            startedBefore = startedNow
            if quietPasses < Self.quietPassesBeforeSleep {
                var pause = timespec(tv_sec: 0, tv_nsec: Int(Self.tick))
                nanosleep(&pause, nil)
                continue
            }
            quietPasses = 0
            // Announce the sleep, then look again: a call that started in
            // between either sees `idle` and wakes us, or is seen here.
            wake.lock()
            idle.store(true, ordering: .sequentiallyConsistent)
            if inFlight.load(ordering: .sequentiallyConsistent) == 0 {
                // A bounded wait: a backstop, never the mechanism.
                _ = wake.wait(until: Date(timeIntervalSinceNow: 1))
            }
            idle.store(false, ordering: .sequentiallyConsistent)
            wake.unlock()
        }
    }
}
