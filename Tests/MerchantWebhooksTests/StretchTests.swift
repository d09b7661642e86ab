import CheckoutEngine
import Foundation
@testable import MerchantWebhooks
import Testing
import TestSupport

/// A stretch of the feed sent at once, cut short (detached) at each moment a
/// worker can be in: every delivery ends up delivered, queued, or left in
/// flight, exactly once, and a session's later events always behind its
/// earlier ones. The workers are played by hand, step by step.
@Suite struct StretchTests {
    static let at = Date(timeIntervalSince1970: 1_800_000_000)

    static func delivery(_ session: String, _ number: Int64) -> WebhookDelivery {
        WebhookDelivery(endpointID: "we_1", sessionID: session, number: number, cursor: EventCursor(transaction: 0, row: number),
                        type: "session.created", body: Data(), queuedAt: at, dueAt: at)
    }

    static func delivered(_ d: WebhookDelivery) -> DeliveryOutcome {
        DeliveryOutcome(endpointID: d.endpointID, sessionID: d.sessionID, number: d.number, at: at, failure: nil)
    }

    static func failed(_ d: WebhookDelivery) -> DeliveryOutcome {
        DeliveryOutcome(endpointID: d.endpointID, sessionID: d.sessionID, number: d.number, at: at,
                        failure: .init(reason: "answered HTTP 500", retryAt: at.addingTimeInterval(5)))
    }

    static func ids(_ deliveries: [WebhookDelivery]) -> [String] { deliveries.map(\.webhookID) }

    let a1 = delivery("a", 1), a2 = delivery("a", 2), a3 = delivery("a", 3), b1 = delivery("b", 1)
    let ended = Shared(0)

    func stretch() -> Stretch { Stretch([[a1, a2, a3], [b1]]) { [ended] in ended.withLock { $0 += 1 } } }

    @Test func detachedBetweenTwoTriesOfAChainQueuesItsRest() {
        let stretch = stretch()
        #expect(stretch.next(0)?.webhookID == a1.webhookID)
        #expect(stretch.ended(0, a1, Self.delivered(a1)) == .next)
        // The worker is between a1's end and a2's start.
        let sent = stretch.detach()
        #expect(sent.delivered == 1 && sent.inFlight.isEmpty)
        #expect(Self.ids(sent.queue) == Self.ids([b1, a2, a3]))
        #expect(stretch.next(0) == nil)
        #expect(ended.withLock { $0 } == 0, "no try was left in flight")
    }

    @Test func detachedBeforeAWorkerTookAnyChainQueuesEveryChain() {
        let stretch = stretch()
        let sent = stretch.detach()
        #expect(sent.delivered == 0 && sent.inFlight.isEmpty)
        #expect(Self.ids(sent.queue) == Self.ids([a1, a2, a3, b1]))
        #expect(stretch.next(0) == nil)
    }

    @Test func aTryInFlightAtTheDetachIsLeftInFlightAndHandedOverOnceWritten() {
        let stretch = stretch()
        #expect(stretch.next(0)?.webhookID == a1.webhookID)
        #expect(stretch.next(1)?.webhookID == b1.webhookID)
        let sent = stretch.detach()
        #expect(Self.ids(sent.inFlight) == Self.ids([a1, b1]))
        #expect(Self.ids(sent.queue) == Self.ids([a2, a3]))
        // One ends before the pump's write is known: held; the other after: handed over at once.
        #expect(stretch.ended(0, a1, Self.delivered(a1)) == .stop)
        let held = stretch.settle(advanced: true)
        #expect(held.map(\.delivery.webhookID) == [a1.webhookID])
        #expect(stretch.ended(1, b1, Self.failed(b1)) == .handOff)
        #expect(ended.withLock { $0 } == 2, "each try left in flight is counted out once")
    }

    @Test func theOutcomesOfAStretchNotWrittenAreDropped() {
        let stretch = stretch()
        _ = stretch.next(0)
        _ = stretch.detach()
        #expect(stretch.ended(0, a1, Self.delivered(a1)) == .stop)
        #expect(stretch.settle(advanced: false).isEmpty)
        #expect(ended.withLock { $0 } == 1)
    }

    @Test func aFailedTryQueuesItselfAndItsSessionsLaterEventsBehindIt() {
        let stretch = stretch()
        #expect(stretch.next(0)?.webhookID == a1.webhookID)
        #expect(stretch.ended(0, a1, Self.failed(a1)) == .next)
        // The worker goes on with the next session.
        #expect(stretch.next(0)?.webhookID == b1.webhookID)
        #expect(stretch.ended(0, b1, Self.delivered(b1)) == .next)
        #expect(stretch.next(0) == nil)
        let sent = stretch.detach()
        #expect(sent.delivered == 1)
        #expect(Self.ids(sent.queue) == Self.ids([a1, a2, a3]))
        #expect(sent.queue[0].tries == 1 && sent.queue[0].failingSince == Self.at && sent.queue[0].lastError == "answered HTTP 500")
        #expect(sent.queue[1].tries == 0 && sent.queue[1].failingSince == nil)
    }
}
