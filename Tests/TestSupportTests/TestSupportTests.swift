import Foundation
import Synchronization
import TestSupport
import Testing

/// What ran at once, seen from inside the gate.
private final class Occupancy: Sendable {
    let state = Mutex((now: 0, most: 0, exclusiveSawOthers: false))
}

/// The suite's own machinery: if these fail, a busy machine's failures cannot be trusted.
@Suite struct HeavyGateTests {
    /// Shared slots: never more at once than the gate's width; an exclusive
    /// holder runs alone, and a nested `.heavy` inside it takes nothing more.
    @Test func heavyWorkNeverRunsWiderThanTheGate() async throws {
        let gate = HeavyGate.shared
        let running = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<12 {
                group.addTask {
                    let exclusive = i % 4 == 0
                    try await gate.withSlots(exclusive ? HeavyGate.width : 1) {
                        running.state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        // Nested: already holding every slot (or one), this must not wait for more than it holds.
                        try await gate.withSlots(exclusive ? HeavyGate.width : 1) {
                            if exclusive { running.state.withLock { if $0.now != 1 { $0.exclusiveSawOthers = true } } }
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        running.state.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = running.state.withLock { $0 }
        #expect(seen.most <= HeavyGate.width && seen.most >= 1 && seen.now == 0)
        #expect(!seen.exclusiveSawOthers, "an exclusive holder ran beside another")
    }
}

@Suite struct StallReportTests {
    static var gdbInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") }

    /// The report names a file holding every thread's stack, this process's.
    @Test(.enabled(if: StallReportTests.gdbInstalled, "gdb is installed (scripts/install-prerequisites)"))
    func aReportHoldsEveryThreadsStack() async throws {
        let report = await offThePool { StallReport.dump("a probe") }
        let path = try #require(report.components(separatedBy: "every thread's stack in ").last?.components(separatedBy: "\n").first,
                                "\(report)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("stall report for a probe") && text.contains("Thread 1 "), "\(report)")
        #expect(text.contains("StallReport"), "the dumping thread's own stack is missing: \(text.prefix(2000))")
        try? FileManager.default.removeItem(atPath: path)
    }

    /// What the pool's threads were doing is read from gdb's frames, stopping at the job's entry.
    @Test func poolThreadsAreReadFromTheirFrames() {
        let output = """
            Thread 3 (Thread 0x7f (LWP 12) "worker"):
            #0  0x00007f in __GI___wait4 ()
            #1  0x000055 in $s11TestSupport12ChildProcessC11waitForExitAC11TerminationOyF ()
            #2  0x000056 in swift::runJobInEstablishedExecutorContext(swift::Job*) ()
            #3  0x000057 in swift_job_run ()

            Thread 2 (Thread 0x7e (LWP 11) "sqlite-checkpoint"):
            #0  0x00007f in __GI___nanosleep ()
            """
        let pool = StallReport.poolThreads(in: "\n" + output)
        #expect(pool.count == 1)
        #expect(pool.first?.first == "__GI___wait4")
        #expect(pool.first?.count == 2, "\(pool)")
    }
}

@Suite struct TestTimeTests {
    @Test func backstopsStretchAndNeverShrink() {
        #expect(TestTime.scale >= 1)
        #expect(Duration.seconds(10).scaled >= .seconds(10))
        #expect(TestTime.minutes(2) >= 2 && TestTime.milliseconds(300) >= 300)
    }
}
