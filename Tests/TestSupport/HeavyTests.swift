import Dispatch
import Foundation
import Synchronization
import Testing

/// A test that loads the whole machine: a gateway over every shipped adapter
/// and its simulators, hundreds of payments, a browser, a compiler, a
/// database cluster, processes by the dozen.
///
/// Swift Testing starts every test of the run at once. Two cores cannot run
/// a hundred such tests side by side: each one's own backstops (an HTTP
/// client's, a provider's timeout) ran out while it waited its turn for a
/// core, and the suite failed on a busy machine where each test passed alone.
/// Tests marked `.heavy` run at most ``HeavyGate/width`` at a time (two by
/// default, `GATEWAY_TEST_HEAVY_WIDTH` to change it); `.heavy(.exclusive)`
/// runs alone among them. Light tests (the engine over a store in memory, a
/// codec) still run beside them.
///
/// While it runs, a heavy test is watched: past ``HeavyTrait/watchdog``
/// (scaled by `GATEWAY_TEST_TIME_SCALE`) every thread's stack is written out
/// once (``StallReport``), so a slow test shows what the process was doing
/// rather than leaving it to be guessed; past ``HeavyTrait/limit`` (scaled
/// too) the test fails and is cancelled. Both count from when the test got
/// its slot, not from when it began to wait for one: which is why heavy
/// tests take no `.timeLimit` of their own (Swift Testing's would count the
/// wait as well).
public struct HeavyTrait: SuiteTrait, TestTrait, TestScoping {
    public enum Weight: Sendable {
        /// One of ``HeavyGate/width`` slots.
        case shared
        /// Every slot: nothing else heavy runs meanwhile.
        case exclusive
    }

    public var weight: Weight
    /// How long a test case may run before its threads are dumped.
    public var watchdog: Duration
    /// How long a test case may run before it fails (a hang guard).
    public var limit: Duration

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's own scope passes through: each of its test cases takes a slot.
        guard testCase != nil else { return try await function() }
        let slots = weight == .exclusive ? HeavyGate.width : 1
        try await HeavyGate.shared.withSlots(slots) {
            let name = "\(test.id)"
            let watch = StallReport.watch(name, after: watchdog.scaled)
            defer { watch.cancel() }
            let limit = limit.scaled
            // The group ends only once both tasks have, so `function` never outlives this call.
            try await withoutActuallyEscaping(function) { function in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask { try await function(); return true }
                    group.addTask {
                        try await Task.sleep(for: limit)
                        Issue.record("\(name) ran past its limit of \(limit) (GATEWAY_TEST_TIME_SCALE stretches it)")
                        return false
                    }
                    // The first to end decides; the other is cancelled (a test that
                    // ignores cancellation is still waited for, as with `.timeLimit`).
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}

extension Trait where Self == HeavyTrait {
    /// A heavy test: one of the few that run at a time.
    public static var heavy: Self { heavy(.shared) }
    /// A heavy test of the given weight, its stacks dumped after `watchdog` and failed after `limit` (both scaled).
    public static func heavy(_ weight: HeavyTrait.Weight, watchdog: Duration = .seconds(240), limit: Duration = .seconds(600)) -> Self {
        HeavyTrait(weight: weight, watchdog: watchdog, limit: limit)
    }
}

/// The slots heavy tests take, first come first served.
public final class HeavyGate: Sendable {
    public static let shared = HeavyGate()

    /// How many heavy tests run at once.
    public static let width: Int = {
        if let text = ProcessInfo.processInfo.environment["GATEWAY_TEST_HEAVY_WIDTH"], let value = Int(text), value > 0 { return value }
        return 2
    }()

    private struct State {
        var free = HeavyGate.width
        var waiting: [(slots: Int, resume: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// The slots the current task already holds (a heavy test inside a heavy suite).
    @TaskLocal private static var held = 0

    /// Runs `body` holding `slots` slots (waiting, in order, until they are
    /// free); slots the task already holds count towards them.
    public func withSlots<T>(_ slots: Int, _ body: () async throws -> T) async rethrows -> T {
        let held = Self.held
        let slots = min(max(slots, 1), Self.width) - held
        guard slots > 0 else { return try await body() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                // In order: a test waiting for every slot is not overtaken forever.
                if state.waiting.isEmpty && state.free >= slots {
                    state.free -= slots
                    return true
                }
                state.waiting.append((slots, continuation))
                return false
            }
            if now { continuation.resume() }
        }
        defer { release(slots) }
        return try await Self.$held.withValue(held + slots) { try await body() }
    }

    private func release(_ slots: Int) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.free += slots
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiting.first, first.slots <= state.free {
                state.free -= first.slots
                ready.append(state.waiting.removeFirst().resume)
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
