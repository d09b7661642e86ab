import CheckoutEngine
import Foundation
import Synchronization

/// One stretch of the feed being sent to one endpoint at once: its
/// sessions' chains (each session's deliveries, in order) taken by workers,
/// and what they came to. The pump waits for it a while (the linger), then
/// ``detach()``es it: what was not sent is queued, the tries still in flight
/// go on, and their outcomes are handed to the retry loop once the rows
/// they update exist (``settle(advanced:)``).
///
/// Every delivery of the stretch is, at every moment, in exactly one place
/// under the lock: a chain waiting, a worker's chain (its first one being
/// tried when the worker is trying), or what the stretch came to (delivered,
/// or queued). So a detach at any moment loses none.
final class Stretch: Sendable {
    /// What a worker does after a try ended.
    enum Next {
        /// Go on (``next(_:)``).
        case next
        /// Detached and written: hand the outcome to the retry loop.
        case handOff
        /// Detached: stop (the outcome was kept for the pump, or dropped with its stretch).
        case stop
    }

    private struct State {
        /// Chains not yet taken, last first.
        var waiting: [ArraySlice<WebhookDelivery>]
        /// Each worker's chain from its delivery being tried (or next) on.
        var holding: [Int: ArraySlice<WebhookDelivery>] = [:]
        /// The workers trying the first delivery of their chain.
        var trying: Set<Int> = []
        var workers = 0
        var sent = SentStretch()
        var detached = false
        /// Nil until the pump's advance is decided: true, written (hand outcomes over); false, not (drop them).
        var advanced: Bool?
        /// Outcomes of detached tries that ended before the advance was decided.
        var held: [(outcome: DeliveryOutcome, delivery: WebhookDelivery)] = []
    }

    private let state: Mutex<State>
    /// Rung when the last worker is done.
    let done = Doorbell()
    /// Told when a try left in flight ends (the pump's count of them).
    private let detachedTryEnded: @Sendable () -> Void

    /// `chains` in the order they are taken.
    init(_ chains: [[WebhookDelivery]], detachedTryEnded: @escaping @Sendable () -> Void) {
        state = Mutex(State(waiting: chains.reversed().map { $0[...] }))
        self.detachedTryEnded = detachedTryEnded
    }

    /// Counts a worker in before it starts (``workerDone()`` counts it out).
    func workerStarts() {
        state.withLock { $0.workers += 1 }
    }

    func workerDone() {
        if state.withLock({ state in state.workers -= 1; return state.workers == 0 }) { done.ring() }
    }

    /// The next delivery worker `worker` tries (the next of its chain, or
    /// the first of the next chain waiting), marked as being tried; nil
    /// when none is left or the stretch is detached.
    func next(_ worker: Int) -> WebhookDelivery? {
        state.withLock { state in
            guard !state.detached else { return nil }
            if state.holding[worker]?.isEmpty ?? true {
                guard let chain = state.waiting.popLast() else {
                    state.holding[worker] = nil
                    return nil
                }
                state.holding[worker] = chain
            }
            state.trying.insert(worker)
            return state.holding[worker]!.first
        }
    }

    /// Worker `worker`'s try of `delivery` (its chain's first) ended with `outcome`.
    func ended(_ worker: Int, _ delivery: WebhookDelivery, _ outcome: DeliveryOutcome) -> Next {
        let next = state.withLock { state -> Next in
            state.trying.remove(worker)
            if state.detached {
                // The pump wrote it claimed; its outcome goes to the retry loop once that write is known.
                switch state.advanced {
                case true?: return .handOff
                case nil: state.held.append((outcome, delivery))
                case false?: break
                }
                return .stop
            }
            var chain = state.holding[worker] ?? []
            chain.removeFirst()
            if let failure = outcome.failure {
                var failed = delivery
                failed.tries = 1
                failed.failingSince = outcome.at
                failed.dueAt = failure.retryAt
                failed.lastError = failure.reason
                state.sent.queue.append(failed)
                state.sent.queue += chain  // its session's later ones wait behind it
                chain = []
            } else {
                state.sent.delivered += 1
                state.sent.lastDelivered = max(state.sent.lastDelivered ?? outcome.at, outcome.at)
            }
            state.holding[worker] = chain
            return .next
        }
        if next != .next { detachedTryEnded() }
        return next
    }

    /// Stops the stretch where it is and answers what to write: what was
    /// delivered, the rows to queue (failures, the chains not taken, the
    /// rest of the workers' chains) and the tries still in flight.
    func detach() -> SentStretch {
        state.withLock { state in
            state.detached = true
            var sent = state.sent
            for chain in state.waiting.reversed() { sent.queue += chain }
            state.waiting.removeAll()
            for worker in state.holding.keys.sorted() {
                guard var chain = state.holding[worker], let first = chain.first else { continue }
                if state.trying.contains(worker) {
                    sent.inFlight.append(first)
                    chain.removeFirst()
                }
                sent.queue += chain
            }
            state.holding.removeAll()
            return sent
        }
    }

    /// Whether the pump's advance wrote the detached tries' rows; answers
    /// the outcomes held meanwhile, to hand over when it did.
    func settle(advanced: Bool) -> [(outcome: DeliveryOutcome, delivery: WebhookDelivery)] {
        state.withLock { state in
            state.advanced = advanced
            defer { state.held.removeAll() }
            return advanced ? state.held : []
        }
    }
}
