import CheckoutEngine
import Synchronization
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
                        try await Task.sleep(for: .milliseconds(20))
                        return counter.next()
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counter.value.load(ordering: .relaxed) == 1)
        #expect(Set(answers) == [1])
    }

    @Test func sameKeyWithAnotherRequestIsAConflict() async throws {
        let gate = IdempotencyGate<String>()
        _ = try await gate.run(key: "k", fingerprint: "a") { "first" }
        await #expect(throws: IdempotencyGate<String>.Refusal.conflict(key: "k")) {
            try await gate.run(key: "k", fingerprint: "b") { "second" }
        }
        #expect(try await gate.run(key: "k", fingerprint: "a") { "again" } == "first")
    }

    struct Declined: Error, Equatable {}

    @Test func aFailureIsReplayedNotRetried() async throws {
        let gate = IdempotencyGate<String>()
        let counter = Counter()
        for _ in 0..<3 {
            await #expect(throws: Declined.self) {
                try await gate.run(key: "k", fingerprint: "f") {
                    _ = counter.next()
                    throw Declined()
                }
            }
        }
        #expect(counter.value.load(ordering: .relaxed) == 1)
    }
}
