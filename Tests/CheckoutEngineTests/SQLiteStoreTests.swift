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
        let applied = try store.appliedMigrations()
        #expect(applied.prefix(2) == ["v1: sessions, attempts, events, idempotency, webhooks",
                                      "v2: idempotency keys bound with their intent (answer filled in later)"])
        let mode = try store.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        // On the connection that commits (GRDB's readers are set up apart).
        let synchronous = try store.writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(synchronous == 2, "the writer's synchronous must be FULL (2): a commit is on disk before the payment is acknowledged")
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

    /// The store binds and reads its hot statements through SQLite's C API
    /// (StatementSet): empty values must stay empty, not turn into NULL. An
    /// empty answer read back as nil would make an answered key look like an
    /// intent with no answer yet.
    @Test(arguments: [true, false])
    func valuesComeBackExactlyAsWrittenEmptyIsNotNull(onDisk: Bool) async throws {
        let store = onDisk ? try SQLiteCheckoutStore(path: temporaryPath()) : try SQLiteCheckoutStore.inMemory()
        let session = try Session(id: "s-é", amount: Money(value: 9_007_199_254_740_993, currency: "SAR"), country: nil,
                                  orderID: "", capture: .automatic)
        _ = try await store.commit(StoreChange(
            session: session, events: [SessionEvent(sessionID: "s-é", at: Date(), type: "session.created", detail: "")],
            answer: IdempotentAnswer(key: "k", fingerprint: "f", body: Data(), reference: "", createdAt: Date(timeIntervalSince1970: 1.5))))
        let stored = try #require(try await store.session("s-é"))
        #expect(stored.orderID == "" && stored.amount.value == 9_007_199_254_740_993 && stored.version == 1)
        #expect(try await store.sessionVersion("s-é") == 1)
        let answer = try #require(try await store.answer(forKey: "k"))
        #expect(answer.body == Data() && answer.reference == "" && answer.fingerprint == "f" && answer.createdAt.timeIntervalSince1970 == 1.5)
        #expect(try await store.answer(forKey: "absent") == nil)
        #expect(try await store.session("absent") == nil)
        #expect(try await store.sessionVersion("absent") == nil)
        let event = try #require(try await store.events(ofSession: "s-é", after: 0).first)
        #expect(event.detail == "" && event.attemptID == nil && event.amount == nil)
        let nulls = try await store.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT order_id IS NULL AS o, typeof(document) AS d FROM session WHERE id = 's-é'")
        }
        #expect(nulls?["o"] == false && nulls?["d"] == "blob")
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
