import Foundation
@testable import PluginHost
import Synchronization
import Testing

/// The deadline sweeper runs each call table's watch on every tick while calls
/// are in flight. When the watch was kept as the value of a generic `Mutex`,
/// each read re-wrapped the stored closure in two more thunks, so calling it
/// went one level deeper every tick, without bound (a host under load would
/// end with the sweeper's stack overflowing).
@Suite struct CallbackSlotTests {
    /// How deep the stack is where the callback runs.
    private final class Depths: Sendable {
        let recorded = Mutex<[Int]>([])
        /// The thread whose calls count (the sweeper's own passes do not).
        let thread = Atomic<UInt>(0)
    }

    @Test func aWatchReadOnEveryTickDoesNotGrowDeeper() {
        let table = CallTable(onViolation: { _ in })
        let depths = Depths()
        table.watch { _ in
            guard depths.thread.load(ordering: .acquiring) == UInt(pthread_self()) else { return }
            let depth = Thread.callStackSymbols.count
            depths.recorded.withLock { $0.append(depth) }
        }
        func measured() -> Int {
            depths.thread.store(UInt(pthread_self()), ordering: .releasing)
            table.runWatch(now: 1)
            depths.thread.store(0, ordering: .releasing)
            return depths.recorded.withLock { $0.removeLast() }
        }
        let first = measured()
        // About 80 seconds of a busy host's ticks.
        for tick in 0..<16_000 { table.runWatch(now: UInt64(tick)) }
        let later = measured()
        #expect(later == first, "the watch ran \(later - first) frames deeper after 16,000 reads (it was \(first) deep)")
    }

    @Test func aSlotCallsWhatWasSetLastAndNothingBefore() {
        let slot = CallbackSlot<Int>()
        let seen = Mutex<[String]>([])
        slot(1)
        slot.set { value in seen.withLock { $0.append("first \(value)") } }
        slot(2)
        slot.set { value in seen.withLock { $0.append("second \(value)") } }
        slot(3)
        #expect(seen.withLock { $0 } == ["first 2", "second 3"])
    }
}
