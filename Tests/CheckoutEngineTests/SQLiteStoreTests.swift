import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
@testable import SQLiteCheckoutStore
import Testing

@Suite struct SQLiteStoreTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("checkout-\(UUID().uuidString)/checkout.sqlite").path
    }

    @Test func migrationsAreNamedAndTheJournalIsWAL() throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        #expect(try store.appliedMigrations() == ["v1: sessions, attempts, events, idempotency, webhooks"])
        let mode = try store.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let synchronous = try store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(synchronous == 2, "synchronous must be FULL (2)")
    }

    @Test func theEventLogIsAppendOnly() async throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        let session = try Session(id: "s", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
        _ = try await store.commit(StoreChange(session: session, events: [SessionEvent(sessionID: "s", at: Date(), type: "session.created")]))
        #expect(throws: DatabaseError.self) { try store.writer.write { db in try db.execute(sql: "UPDATE event SET type = 'x'") } }
        #expect(throws: DatabaseError.self) { try store.writer.write { db in try db.execute(sql: "DELETE FROM event") } }
        #expect(try await store.events(ofSession: "s", after: 0).map(\.type) == ["session.created"])
    }

    @Test func aStaleWriteIsRefusedAndWritesNothing() async throws {
        let store = try SQLiteCheckoutStore.inMemory()
        var session = try Session(id: "s", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
        _ = try await store.commit(StoreChange(session: session, events: []))
        session.version = 1
        _ = try await store.commit(StoreChange(session: session, events: []))
        // Written again at version 1, which is no longer current.
        await #expect(throws: StoreConflict.staleSession(id: "s", expected: 1)) {
            try await store.commit(StoreChange(session: session, events: [SessionEvent(sessionID: "s", at: Date(), type: "lost")]))
        }
        #expect(try await store.events(ofSession: "s", after: 0).isEmpty)
        #expect(try await store.session("s")?.version == 2)
    }

    @Test func concurrentCommitsAreGroupedAndEachIsAnsweredWithItsOwnOutcome() async throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let session = try Session(id: "s\(i)", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
                    let events = try await store.commit(StoreChange(session: session, events: [SessionEvent(sessionID: "s\(i)", at: Date(), type: "session.created")]))
                    #expect(events.count == 1 && events[0].sequence > 0)
                }
            }
            // Duplicates of s0..s9 are refused one by one, without failing the others.
            for i in 0..<10 {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(50))
                    let session = try Session(id: "s\(i)", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
                    await #expect(throws: StoreConflict.self) { try await store.commit(StoreChange(session: session, events: [])) }
                }
            }
            try await group.waitForAll()
        }
        let count = try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session") }
        #expect(count == 200)
    }

    @Test func noInstrumentEverReachesTheDatabase() async throws {
        let path = temporaryPath()
        let store = try SQLiteCheckoutStore(path: path)
        let provider = ScriptedProvider.approving("a")
        let checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider)]), fingerprintKey: testKey)
        let session = try await checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"))
        let pan = "4111111111111111"
        _ = try await checkout.attempt(session: session.session.id, NewAttempt(method: "visa", instrument: ["number": .string(pan), "cvv": .string("737")]),
                                       idempotencyKey: "k")
        for file in [path, path + "-wal"] {
            let bytes = FileManager.default.contents(atPath: file) ?? Data()
            #expect(bytes.range(of: Data(pan.utf8)) == nil, "\(file) holds the card number")
            #expect(bytes.range(of: Data("\"737\"".utf8)) == nil, "\(file) holds the CVV")
        }
        // The adapter did receive it: it was passed through, not dropped.
        if case .authorize(let r) = provider.calls.first { #expect(r.instrument?["number"] == .string(pan)) } else { Issue.record("no authorize") }
    }
}
