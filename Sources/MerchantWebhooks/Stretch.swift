import CheckoutEngine
import Foundation
import Synchronization

/// One stretch of the feed being sent to one endpoint at once: its
/// sessions' chains (each session's deliveries, in order) taken by workers,
/// and what they came to. The pump waits for it a while (the linger), then
/// ``detach()``es what is still in flight: those tries go on, and their
/// outcomes are handed to the retry loop once the rows they update exist
/// (``settle(advanced:)``).
final class Stretch: Sendable {
    /// What a worker does after a try ended.
    enum Next {
        /// Go on with the chain's next delivery.
        case next
        /// The chain is done (a failure queued it and the rest).
        case stop
        /// Detached and written: hand the outcome to the retry loop.
        case handOff
    }

    private struct State {
        /// Chains not yet taken, last first.
        var waiting: [ArraySlice<WebhookDelivery>]
        /// Each worker's delivery in flight, and the rest of its chain.
        var inFlight: [Int: (delivery: WebhookDelivery, rest: ArraySlice<WebhookDelivery>)] = [:]
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

    /// `chains` in the order they are taken.
    init(_ chains: [[WebhookDelivery]]) {
        state = Mutex(State(waiting: chains.reversed().map { $0[...] }))
    }

    /// Counts a worker in before it starts (``workerDone()`` counts it out).
    func workerStarts() {
        state.withLock { $0.workers += 1 }
    }

    func workerDone() {
        if state.withLock({ state in state.workers -= 1; return state.workers == 0 }) { done.ring() }
    }

    /// The next chain to send, nil when none is left or the stretch is detached.
    func take() -> ArraySlice<WebhookDelivery>? {
        state.withLock { state in state.detached ? nil : state.waiting.popLast() }
    }

    /// Worker `worker` is about to try `delivery`, `rest` behind it: false
    /// when the stretch was detached (the pump queued them).
    func begin(_ worker: Int, _ delivery: WebhookDelivery, rest: ArraySlice<WebhookDelivery>) -> Bool {
        state.withLock { state in
            guard !state.detached else { return false }
            state.inFlight[worker] = (delivery, rest)
            return true
        }
    }

    /// Worker `worker`'s try of `delivery` ended with `outcome`.
    func ended(_ worker: Int, _ delivery: WebhookDelivery, _ outcome: DeliveryOutcome) -> Next {
        state.withLock { state in
            let rest = state.inFlight.removeValue(forKey: worker)?.rest ?? []
            if state.detached {
                // The pump wrote it claimed; its outcome goes to the retry loop once that write is known.
                switch state.advanced {
                case true?: return .handOff
                case nil: state.held.append((outcome, delivery))
                case false?: break
                }
                return .stop
            }
            guard let failure = outcome.failure else {
                state.sent.delivered += 1
                state.sent.lastDelivered = max(state.sent.lastDelivered ?? outcome.at, outcome.at)
                return .next
            }
            var failed = delivery
            failed.tries = 1
            failed.failingSince = outcome.at
            failed.dueAt = failure.retryAt
            failed.lastError = failure.reason
            state.sent.queue.append(failed)
            state.sent.queue += rest
            return .stop
        }
    }

    /// Stops the stretch where it is and answers what to write: what was
    /// delivered, the rows to queue (failures, the chains not taken, the
    /// rest of those in flight) and the tries still in flight.
    func detach() -> SentStretch {
        state.withLock { state in
            state.detached = true
            var sent = state.sent
            for chain in state.waiting.reversed() { sent.queue += chain }
            state.waiting.removeAll()
            for worker in state.inFlight.keys.sorted() {
                let (delivery, rest) = state.inFlight[worker]!
                sent.inFlight.append(delivery)
                sent.queue += rest
            }
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
