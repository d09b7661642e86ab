import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
@testable import SQLiteCheckoutStore
import TestSupport
import Testing

@Suite struct SQLiteStoreTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("checkout-\(UUID().uuidString)/checkout.sqlite").path
    }

    @Test func migrationsAreNamedAndTheJournalIsWAL() throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        let applied = try store.appliedMigrations()
        #expect(applied.prefix(2) == ["v1: sessions, attempts, events, idempotency, webhooks",
                                      "v2: idempotency keys bound with their intent (answer filled in later)"])
        let mode = try store.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        // On the connection that commits (GRDB's readers are set up apart).
        let synchronous = try store.writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(synchronous == 2, "the writer's synchronous must be FULL (2): a commit is on disk before the payment is acknowledged")
    }

    /// The store binds its hot statements through SQLite's C API
    /// (StatementSet): an empty value must be stored empty, not NULL, and a
    /// document as a blob. (That values come back exactly as written is the
    /// store contract's, ``StoreContractTests``.)
    @Test(arguments: [true, false])
    func emptyIsStoredEmptyNotNull(onDisk: Bool) async throws {
        let store = onDisk ? try SQLiteCheckoutStore(path: temporaryPath()) : try SQLiteCheckoutStore.inMemory()
        let session = try Session(id: "s-é", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "", capture: .automatic)
        _ = try await store.commit(StoreChange(
            session: session, events: [SessionEvent(sessionID: "s-é", at: Date(), type: "session.created", detail: "")],
            answer: IdempotentAnswer(key: "k", fingerprint: "f", body: Data(), reference: "", createdAt: Date())))
        let nulls = try await store.writer.read { db in
            try Row.fetchOne(db, sql: """
                SELECT order_id IS NULL AS o, typeof(document) AS d,
                       (SELECT body IS NULL FROM idempotency WHERE key = 'k') AS b,
                       (SELECT detail IS NULL FROM event WHERE session_id = 's-é') AS e
                FROM session WHERE id = 's-é'
                """)
        }
        let row = try #require(nulls)
        let orderIsNull: Bool = row["o"], bodyIsNull: Bool = row["b"], detailIsNull: Bool = row["e"]
        let documentType: String = row["d"]
        #expect(!orderIsNull && !bodyIsNull && !detailIsNull && documentType == "blob")
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
                    // Once its original is in (the others may still be in flight).
                    _ = try await waitUntil { (try? await store.sessionVersion("s\(i)")) != nil }
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

    /// A change that fails after writing part of itself (here a trigger refuses
    /// its event, after its session row was written) must leave nothing, and
    /// the changes batched with it must still commit.
    @Test func aChangeFailingPartWayIsUndoneAloneAndTheBatchCommits() async throws {
        let queue = try DatabaseQueue()
        let store = try SQLiteCheckoutStore(writer: queue)
        try await queue.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_boom BEFORE INSERT ON event WHEN NEW.type = 'boom'
                BEGIN SELECT RAISE(ABORT, 'boom refused'); END
                """)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask {
                    let id = "s\(i)"
                    let session = try Session(id: id, amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
                    let change = StoreChange(session: session, events: [SessionEvent(sessionID: id, at: Date(), type: i == 7 ? "boom" : "session.created")],
                                             answer: IdempotentAnswer(key: "k\(i)", fingerprint: "f", body: Data("{}".utf8), createdAt: Date()))
                    if i == 7 {
                        await #expect(throws: DatabaseError.self) { try await store.commit(change) }
                    } else {
                        _ = try await store.commit(change)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.session("s7") == nil, "the failed change's session row was kept")
        #expect(try await store.answer(forKey: "k7") == nil)
        #expect(try await store.session("s8") != nil)
        let count = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session") }
        #expect(count == 39)
    }

    /// Lookups run on the store's own read-only connections (and on GRDB's
    /// pool when all are taken): each sees every commit that returned before
    /// it, with many more lookups at once than there are connections.
    @Test func aLookupSeesEveryCommitThatReturnedBeforeIt() async throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<64 {
                group.addTask {
                    var session = try Session(id: "s\(i)", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
                    for version in 0..<5 {
                        session.version = version
                        let answer = IdempotentAnswer(key: "k\(i)-\(version)", fingerprint: "f", body: Data("{}".utf8), createdAt: Date())
                        _ = try await store.commit(StoreChange(session: session, events: [], answer: answer))
                        #expect(try await store.sessionVersion("s\(i)") == version + 1)
                        #expect(try await store.answer(forKey: "k\(i)-\(version)")?.fingerprint == "f")
                        #expect(try await store.session("s\(i)")?.version == version + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.answer(forKey: "never used") == nil)
        #expect(try await store.sessionVersion("missing") == nil)
    }

    /// The writer never checkpoints below its backstop; the checkpointer thread
    /// copies committed pages into the database file on its own.
    @Test func theCheckpointerCopiesTheLogIntoTheDatabaseFile() async throws {
        let path = temporaryPath()
        let store = try SQLiteCheckoutStore(path: path)
        let autocheckpoint = try await store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == Checkpointer.writerLimitPages)
        for i in 0..<50 {
            let session = try Session(id: "s\(i)", amount: Money(value: 1, currency: "SAR"), country: nil, orderID: "o", capture: .automatic)
            _ = try await store.commit(StoreChange(session: session, events: []))
        }
        // A copy of the database file alone (no log) holds them once the
        // checkpointer has run.
        let copy = temporaryPath()
        try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var found = 0
        for _ in 0..<250 where found < 50 {
            try await Task.sleep(for: .milliseconds(20))
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            found = (try? await DatabaseQueue(path: copy).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session") ?? 0 }) ?? 0
        }
        #expect(found == 50)
    }
}
