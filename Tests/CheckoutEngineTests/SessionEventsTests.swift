import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import TestSupport
import Testing

/// A provider that approves every payment and accepts any notification
/// `"<payment id> <event id>"`: each records one `webhook.received` event in
/// the payment's session and changes nothing else.
private func notifiable() -> ScriptedProvider {
    ScriptedProvider("a", webhook: { request in
        let words = String(decoding: Data(base64Encoded: request.body) ?? Data(), as: UTF8.self).split(separator: " ")
        return WebhookResult(verified: true, eventId: String(words[1]), paymentId: String(words[0]))
    }) { call in .answered(ScriptedProvider.success(call)) }
}

extension EngineFixture {
    /// A paid session: its id, its payment's id and how many events it has recorded.
    fileprivate func paidSession() async throws -> (id: String, payment: String, recorded: Int64) {
        let id = try await session().id
        let payment = try await checkout.attempt(session: id, NewAttempt(method: "mada")).id
        return (id, payment, Int64(try await store.events(ofSession: id, after: 0).count))
    }

    /// Commits one more event to `payment`'s session (through `engine`, this fixture's by default).
    fileprivate func notify(_ payment: String, through engine: Checkout? = nil) async throws {
        let outcome = try await (engine ?? checkout).webhook(provider: "a", headers: [:], body: Data("\(payment) \(UUID().uuidString)".utf8))
        guard case .applied = outcome else {
            Issue.record("the notification was not applied: \(outcome)")
            throw CancellationError()
        }
    }
}

@Suite struct SessionEventsTests {
    /// A reader that stops reading while more events are committed than its
    /// buffer holds is handed the ones it held and then ended, never the
    /// newest over the ones in between; resuming after the last number it saw
    /// yields every later event exactly once, in order, then live ones.
    @Test func aFloodedReaderIsEndedNotSkippedAndResumesWithEveryLaterEventOnce() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), notifiable())])
        let (id, payment, recorded) = try await f.paidSession()
        let other = try await f.paidSession()
        var reader = try await f.checkout.events(ofSession: id, buffer: 2).makeAsyncIterator()
        for number in 1...recorded {
            #expect(try await reader.next()?.sequence == number)
        }
        // Ten events while the reader reads nothing (and another session's between them).
        for _ in 0..<10 {
            try await f.notify(payment)
            try await f.notify(other.payment)
        }
        let held = [try await reader.next()?.sequence, try await reader.next()?.sequence]
        try #require(held == [recorded + 1, recorded + 2], "the reader was skipped ahead")
        do {
            let more = try await reader.next()
            Issue.record("a reader past its buffer was not ended: it got \(String(describing: more))")
        } catch let behind as SessionEvents.FellBehind {
            #expect(behind == SessionEvents.FellBehind(sessionID: id, resumeAfter: recorded + 2))
        }

        var resumed = try await f.checkout.events(ofSession: id, after: recorded + 2).makeAsyncIterator()
        var seen: [Int64] = []
        for _ in 0..<8 { seen.append(try #require(try await resumed.next()).sequence) }
        #expect(seen == Array((recorded + 3)...(recorded + 10)))
        try await f.notify(payment)
        let live = try #require(try await resumed.next())
        #expect(live.sequence == recorded + 11 && live.type == .webhookReceived)
    }

    /// Events committed after a stream is opened and before its history is
    /// read are both recorded and live: each is delivered once. Events
    /// committed after the history was read arrive live, numbered on.
    @Test func eventsCommittedWhileTheHistoryIsReadAreDeliveredOnceInOrder() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), notifiable())])
        let (id, payment, recorded) = try await f.paidSession()
        let other = try await f.paidSession()
        let events = try await f.checkout.events(ofSession: id)
        for _ in 0..<3 {
            try await f.notify(payment)
            try await f.notify(other.payment)
        }
        var reader = events.makeAsyncIterator()
        var seen: [Int64] = []
        for _ in 0..<(recorded + 3) { seen.append(try #require(try await reader.next()).sequence) }
        #expect(seen == Array(1...(recorded + 3)))
        try await f.notify(other.payment)
        try await f.notify(payment)
        #expect(try await reader.next()?.sequence == recorded + 4)
    }

    /// An event committed by another engine on the same store never reaches
    /// this engine's subscribers live; the next live event reveals the gap,
    /// and the missing one is read from the store before it.
    @Test func eventsAnotherEngineCommitsOnTheSameStoreAreNotSkipped() async throws {
        let store = try SQLiteCheckoutStore.inMemory()
        let provider = notifiable()
        let f = try EngineFixture([(profile("a", priority: 1), provider)], store: store)
        let elsewhere = Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider)]), fingerprintKey: testKey)
        let (id, payment, recorded) = try await f.paidSession()
        var reader = try await f.checkout.events(ofSession: id).makeAsyncIterator()
        for number in 1...recorded {
            #expect(try await reader.next()?.sequence == number)
        }
        try await f.notify(payment, through: elsewhere)
        try await f.notify(payment)
        let next = try await reader.next()?.sequence
        try #require(next == recorded + 1, "the other engine's event was skipped")
        #expect(try await reader.next()?.sequence == recorded + 2)
    }
}
