import CheckoutEngine
import Synchronization
import TestSupport
import Testing

@Suite struct IdempotencyTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func next() -> Int { value.add(1, ordering: .relaxed).newValue }
    }

    @Test func hundredConcurrentIdenticalRequestsRunOnce() async throws {
        let gate = IdempotencyGate<Int>()
        let counter = Counter()
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await gate.run(key: "k", fingerprint: "f") {
                        while await gate.waiting(for: "k") < 99 { await Task.yield() }
                        return counter.next()
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counter.value.load(ordering: .relaxed) == 1)
        #expect(Set(answers) == [1])
    }

    @Test func aConcurrentCallWithAnotherRequestIsAConflict() async throws {
        let gate = IdempotencyGate<String>()
        // The first run holds the key until the test lets it go, after the conflict.
        let (release, go) = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            try await gate.run(key: "k", fingerprint: "a") {
                for await _ in release { break }
                return "first"
            }
        }
        while await gate.inFlight == 0 { await Task.yield() }
        await #expect(throws: IdempotencyGate<String>.Refusal.conflict(key: "k")) {
            try await gate.run(key: "k", fingerprint: "b") { "second" }
        }
        go.yield()
        #expect(try await first.value == "first")
        #expect(await gate.inFlight == 0)
    }

    struct Declined: Error, Equatable {}

    @Test func waitersShareTheFailureOfTheRunTheyWaitedFor() async throws {
        let gate = IdempotencyGate<String>()
        let counter = Counter()
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await gate.run(key: "k", fingerprint: "f") {
                            _ = counter.next()
                            while await gate.waiting(for: "k") < 9 { await Task.yield() }
                            throw Declined()
                        }
                        return false
                    } catch { return error is Declined }
                }
            }
            for await failed in group { #expect(failed) }
        }
        #expect(counter.value.load(ordering: .relaxed) == 1)
    }
}
