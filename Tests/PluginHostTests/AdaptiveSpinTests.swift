import Foundation
@testable import PluginHost
import Testing

/// The short spin a runner's reader and a lone host caller make before they
/// block: bounded, and spun rarely for a peer that does not answer fast
/// (a slow adapter, or a hostile one answering just inside the limit to keep
/// a host thread spinning).
@Suite struct AdaptiveSpinTests {
    /// Waits that actually spun (called `ready` at least once), of `waits`.
    private func spins(_ spin: AdaptiveSpin, waits: Int, ready: @escaping (UInt64) -> Bool) -> (spun: Int, ready: Int) {
        var spun = 0, readyCount = 0
        for _ in 0..<waits {
            let start = DeadlineSweeper.now()
            var called = false
            if spin.spin(until: { called = true; return ready(start) }) { readyCount += 1 }
            if called { spun += 1 }
        }
        return (spun, readyCount)
    }

    @Test func aPeerThatNeverAnswersInTimeIsSpunForRarely() {
        let spin = AdaptiveSpin(limit: 20_000)
        let (spun, ready) = spins(spin, waits: 300) { _ in false }
        #expect(ready == 0)
        // Two misses, then 1, 2, 4, ... waits skipped: about log2 of the waits.
        #expect(spun <= 12, "spun \(spun) of 300 waits")
    }

    @Test func anAnswerAfterHalfTheLimitIsAMiss() {
        let limit: UInt64 = 2_000_000
        let spin = AdaptiveSpin(limit: limit)
        // Always answered, but only after three quarters of the limit.
        let (spun, ready) = spins(spin, waits: 300) { start in DeadlineSweeper.now() >= start + limit * 3 / 4 }
        #expect(spun == ready)
        #expect(spun <= 12, "a late peer was spun for \(spun) of 300 waits")
    }

    @Test func aPeerThatAnswersAtOnceIsAlwaysSpunFor() {
        let spin = AdaptiveSpin(limit: 1_000_000_000)
        let (spun, ready) = spins(spin, waits: 300) { _ in true }
        #expect(spun == 300 && ready == 300)
    }

    @Test func oneAnswerInTimeEndsTheBackOff() {
        let spin = AdaptiveSpin(limit: 20_000)
        _ = spins(spin, waits: 50) { _ in false }
        // Skipping now; the first wait that spins and is answered at once resets it.
        var answered = false
        for _ in 0..<2_000 where !answered { answered = spin.spin { true } }
        #expect(answered)
        let (spun, _) = spins(spin, waits: 20) { _ in true }
        #expect(spun == 20)
    }
}
