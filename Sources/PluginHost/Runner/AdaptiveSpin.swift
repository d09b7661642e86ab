import Foundation
import Synchronization

/// A short wait by spinning, for a thread about to block on a peer that
/// usually answers within microseconds: the runner's reader waiting for its
/// next frame, a host caller waiting for its runner's answer.
///
/// Why: a thread that blocks lets its CPU go idle, and on a small VM waking
/// an idle CPU is most of what a cross-process hop costs (the raw ping-pong's
/// two hops took 44 µs on the 2-core machine of issue 36). A thread that
/// keeps its CPU for the few microseconds the answer takes sees it with no
/// wake-up at all.
///
/// The spin is bounded and tunes itself:
/// - It never keeps a thread that could run here off this CPU: every turn is
///   a `sched_yield`, so a thread woken onto this CPU (often the very one that
///   brings the answer) runs at once.
/// - It lasts at most ``limit``. An answer seen only after half of it counts
///   as a miss: the machine is busy (this thread was off its CPU), or the
///   peer is slow, or a hostile adapter answers just inside the limit to
///   keep a host thread spinning. A peer that always answers late is spun
///   for about once in a thousand waits, and one that answers in time is
///   spun for no longer than a wake-up would have cost.
/// - After two misses in a row the next 1, 2, 4... up to ``maxSkipped`` waits
///   do not spin, and one hit ends that: a peer that answers slowly (an
///   adapter that calls its provider over HTTP) costs one spin in about a
///   thousand waits, while one late answer among fast ones changes nothing.
package final class AdaptiveSpin: Sendable {
    /// The longest one spin lasts, in nanoseconds.
    package let limit: UInt64
    /// The most waits skipped after misses.
    static let maxSkipped = 1_024
    /// Misses in a row (0 after a hit).
    private let misses = Atomic<Int>(0)
    /// Waits still to skip.
    private let skipping = Atomic<Int>(0)

    package init(limit: UInt64) {
        self.limit = limit
    }

    /// Spins until `ready()` holds or ``limit`` has passed, yielding the CPU
    /// on every turn; returns whether `ready()` held. Returns false at once
    /// (without calling `ready`) while misses have it skip. The counters are
    /// a heuristic: threads racing on them only skip one spin more or less.
    package func spin(until ready: () -> Bool) -> Bool {
        if skipping.load(ordering: .relaxed) > 0 {
            skipping.subtract(1, ordering: .relaxed)
            return false
        }
        let start = DeadlineSweeper.now()
        let deadline = start &+ limit
        while true {
            if ready() {
                record(hit: DeadlineSweeper.now() <= start &+ limit / 2)
                return true
            }
            if DeadlineSweeper.now() > deadline {
                record(hit: false)
                return false
            }
            _ = sched_yield()
        }
    }

    private func record(hit: Bool) {
        if hit {
            misses.store(0, ordering: .relaxed)
            skipping.store(0, ordering: .relaxed)
            return
        }
        let inARow = misses.add(1, ordering: .relaxed).newValue
        if inARow >= 2 {
            skipping.store(min(1 << min(inARow - 2, 10), Self.maxSkipped), ordering: .relaxed)
        }
    }
}

/// Leave to spin, one thread at a time in a process: a second spinner would
/// only take a CPU from the threads that make the answer (the machine may
/// have two).
final class SpinSlot: Sendable {
    /// For callers waiting for their runner's answer (``RunnerConnection``).
    static let hostCallers = SpinSlot()

    private let taken = Atomic<Bool>(false)

    /// Takes the slot; false when another thread holds it.
    func take() -> Bool {
        taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    func release() {
        taken.store(false, ordering: .releasing)
    }
}
