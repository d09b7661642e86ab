import Dispatch
import GatewayPayloads
import Synchronization

/// Gathers the calls of one kind made at the same time into one round trip:
/// PostgreSQL's cost is mostly per round trip and per transaction (a backend
/// woken over a socket, a statement bound and run, a WAL flush for a
/// commit), not per row, so under load one statement carrying many changes
/// or many keys costs little more than one carrying a single one.
///
/// A call joins the queue; when fewer than `lanes` batches are running, it
/// starts one, which takes everything queued (up to `largest`), runs it, and
/// goes on with what queued meanwhile until the queue is empty. So a call
/// on an idle store runs at once, alone, and calls arriving while batches
/// run wait at most for one of them to end. Each call gets its own answer;
/// a call is never dropped (``run`` answers every item, or the batch's error).
///
/// The caller waits for its answer whatever happens to its task: a change
/// handed to the database is reported as it ended, never as cancelled. A
/// call still queued when its `deadline` passes (the batch before it stuck
/// on a lock, or on a database that stopped answering) is taken out of the
/// queue, never to run, and fails with ``BatchQueuedPastDeadline``: the caller
/// hears at once that nothing of it was sent, rather than waiting behind the
/// stuck batch.
final class Batcher<Item: Sendable, Answer: Sendable>: Sendable {
    typealias Run = @Sendable ([Item]) async -> [Result<Answer, any Error>]

    private struct Waiting: Sendable {
        var ticket: UInt64
        var item: Item
        var continuation: CheckedContinuation<Answer, any Error>
        /// Its deadline's ticket in ``deadlines`` (nil: none).
        var deadline: UInt64?
    }

    private struct State: Sendable {
        var queue: [Waiting] = []
        var running = 0
        var tickets: UInt64 = 0
    }

    private let state = Mutex(State())
    private let lanes: Int
    private let largest: Int
    private let deadlines: Deadlines

    /// - Parameters:
    ///   - lanes: batches of this kind running at once.
    ///   - largest: items in one batch at most.
    ///   - deadlines: watches the queued calls' deadlines (the store's
    ///     batchers share one).
    init(lanes: Int, largest: Int, deadlines: Deadlines = Deadlines()) {
        precondition(lanes > 0 && largest > 0)
        self.lanes = lanes
        self.largest = largest
        self.deadlines = deadlines
    }

    /// Calls waiting for a batch to take them.
    var queued: Int { state.withLock { $0.queue.count } }

    /// "N queued, M running" (batches), for a log.
    var load: String { state.withLock { "\($0.queue.count) queued, \($0.running) batches running" } }

    /// `item`'s answer, from a batch that `run` runs (every caller of one
    /// batcher gives the same `run`: one answer per item, in order), or
    /// ``BatchQueuedPastDeadline`` when no batch took it within `deadline`.
    func submit(_ item: Item, deadline: Duration? = nil, run: @escaping Run) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let starts = state.withLock { state in
                state.tickets += 1
                let ticket = state.tickets
                var waiting = Waiting(ticket: ticket, item: item, continuation: continuation)
                let starts = state.running < lanes
                if starts {
                    state.running += 1
                } else if let deadline {
                    waiting.deadline = deadlines.add(after: deadline) { self.expire(ticket, after: deadline) }
                }
                state.queue.append(waiting)
                return starts
            }
            if starts {
                // Detached: a lane serves every caller, so it takes none's
                // task locals (graceful shutdown) or priority.
                Task.detached { await self.drain(run) }
            }
        }
    }

    /// Fails the call `ticket` if it is still queued (else a batch took it,
    /// and it is answered from there).
    private func expire(_ ticket: UInt64, after deadline: Duration) {
        let expired: Waiting? = state.withLock { state in
            guard let index = state.queue.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            return state.queue.remove(at: index)
        }
        expired?.continuation.resume(throwing: BatchQueuedPastDeadline(deadline: deadline))
    }

    /// One lane: batches until the queue is empty.
    private func drain(_ run: Run) async {
        while true {
            let batch: [Waiting] = state.withLock { state in
                guard !state.queue.isEmpty else {
                    state.running -= 1
                    return []
                }
                let count = min(largest, state.queue.count)
                let taken = Array(state.queue[..<count])
                state.queue.removeFirst(count)
                return taken
            }
            guard !batch.isEmpty else { return }
            deadlines.remove(all: batch.lazy.compactMap(\.deadline))
            let answers = await run(batch.map(\.item))
            for (index, waiting) in batch.enumerated() {
                waiting.continuation.resume(with: index < answers.count
                    ? answers[index]
                    : .failure(BatchAnsweredShort(items: batch.count, answers: answers.count)))
            }
        }
    }

    /// A batch's run answered fewer results than it had items (a bug in the
    /// run; the items without an answer fail with this).
    struct BatchAnsweredShort: Error, CustomStringConvertible {
        var items: Int
        var answers: Int
        var description: String { "a batch of \(items) was answered \(answers) results" }
    }
}

/// A call no batch took within its deadline (``Batcher``): it never ran.
struct BatchQueuedPastDeadline: Error, CustomStringConvertible {
    var deadline: Duration
    var description: String {
        "waited \(deadline) for the batch before it, which has not ended (a statement stuck on a lock, or a database that stopped answering); not sent"
    }
}
