import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PostgresNIO
@testable import PostgresCheckoutStore
import Synchronization
import TestSupport
import Testing

/// The PostgreSQL store gathers the calls made at the same time into one
/// round trip (``Batcher``): each call still gets its own answer, and a
/// change refused, or failing, in a batch costs the others nothing.
@Suite struct BatcherTests {
    final class Record: Sendable {
        let batches = Mutex<[[Int]]>([])
        let running = Mutex((now: 0, most: 0))
    }

    /// A thousand calls at once, the first batch held until all are queued:
    /// each gets its own answer, once; batches are at most `largest` and
    /// never run two at a time on one lane, and they did gather.
    @Test func everyCallGetsItsOwnAnswerOnceAndCallsMadeMeanwhileGather() async throws {
        let batcher = Batcher<Int, Int>(lanes: 1, largest: 50)
        let record = Record()
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let run: Batcher<Int, Int>.Run = { items in
            record.running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            let first = record.batches.withLock { $0.append(items); return $0.count == 1 }
            if first { for await _ in released { break } }
            record.running.withLock { $0.now -= 1 }
            return items.map { .success($0 * 2) }
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for i in 0..<1000 { group.addTask { (i, try await batcher.submit(i, run: run)) } }
            group.addTask {
                let gathered = try await waitUntil(within: .seconds(60)) {
                    guard let first = record.batches.withLock({ $0.first?.count }) else { return false }
                    return batcher.queued == 1000 - first
                }
                #expect(gathered)
                release.yield()
                return (-1, -2)
            }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 1001 && (0..<1000).allSatisfy { answers[$0] == $0 * 2 })
        let batches = record.batches.withLock { $0 }
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<1000), "each item in exactly one batch")
        let rest = 1000 - batches[0].count
        #expect(batches.allSatisfy { $0.count <= 50 } && batches.count == 1 + (rest + 49) / 50, "\(batches.map(\.count))")
        #expect(record.running.withLock { $0.most } == 1)
    }

    /// One lane, whose batch holding item 1 does not end until `release`
    /// yields; every batch run is recorded in `ran`.
    final class StuckLane: Sendable {
        let batcher = Batcher<Int, Int>(lanes: 1, largest: 8)
        let ran = Mutex<[[Int]]>([])
        let release: AsyncStream<Void>.Continuation
        private let released: AsyncStream<Void>

        init() { (released, release) = AsyncStream.makeStream(of: Void.self) }

        var run: Batcher<Int, Int>.Run {
            { [self] items in
                ran.withLock { $0.append(items) }
                if items == [1] { for await _ in released { break } }
                return items.map { .success($0) }
            }
        }
    }

    /// A batch that does not end (a statement stuck on a lock) holds its
    /// lane; a call queued behind it fails once its deadline passes, at
    /// once and without ever running, while the stuck batch's own call gets
    /// its answer when it ends.
    @Test(.timeLimit(.minutes(TestTime.minutes(3)))) func aCallQueuedPastItsDeadlineBehindAStuckBatchFailsWithoutRunning() async throws {
        let lane = StuckLane()
        let (batcher, run) = (lane.batcher, lane.run)
        let stuck = Task { try await batcher.submit(1, deadline: .milliseconds(50), run: run) }
        #expect(try await waitUntil { lane.ran.withLock { $0 } == [[1]] })
        let error = await #expect(throws: BatchQueuedPastDeadline.self) { try await batcher.submit(2, deadline: .milliseconds(50), run: run) }
        #expect(error?.description.contains("not sent") == true)
        #expect(batcher.queued == 0)
        lane.release.yield()
        #expect(try await stuck.value == 1)
        #expect(try await batcher.submit(3, deadline: .milliseconds(50), run: run) == 3)
        #expect(lane.ran.withLock { $0 } == [[1], [3]], "the call that expired ran")
    }

    /// The queue has one alarm, at its earliest deadline: a call with a
    /// short deadline queued after one with a long deadline still fails at
    /// its own, while the other stays queued and runs once the stuck batch
    /// ends.
    @Test(.timeLimit(.minutes(TestTime.minutes(3)))) func aShortDeadlineQueuedAfterALongOneFailsAtItsOwn() async throws {
        let lane = StuckLane()
        let (batcher, run) = (lane.batcher, lane.run)
        let stuck = Task { try await batcher.submit(1, run: run) }
        #expect(try await waitUntil { lane.ran.withLock { $0 } == [[1]] })
        let patient = Task { try await batcher.submit(2, deadline: .seconds(3600), run: run) }
        #expect(try await waitUntil { batcher.queued == 1 })
        await #expect(throws: BatchQueuedPastDeadline.self) { try await batcher.submit(3, deadline: .milliseconds(50), run: run) }
        #expect(batcher.queued == 1, "the call with the long deadline left the queue")
        lane.release.yield()
        #expect(try await stuck.value == 1)
        #expect(try await patient.value == 2)
        #expect(lane.ran.withLock { $0 } == [[1], [2]])
    }

    /// A call on an idle batcher runs at once, alone; a batch's failure is
    /// each of its calls' failure.
    @Test func aLoneCallRunsAloneAndABatchFailureReachesEachCall() async throws {
        struct Down: Error {}
        let batcher = Batcher<Int, Int>(lanes: 2, largest: 8)
        let sizes = Mutex<[Int]>([])
        #expect(try await batcher.submit(7) { items in sizes.withLock { $0.append(items.count) }; return items.map { .success($0) } } == 7)
        #expect(sizes.withLock { $0 } == [1])
        await #expect(throws: Down.self) { try await batcher.submit(1) { items in items.map { _ in .failure(Down()) } } }
        await #expect(throws: Batcher<Int, Int>.BatchAnsweredShort.self) { try await batcher.submit(1) { _ in [] } }
    }
}

/// The store's deadlines on one timer (``Deadlines``): an action runs once
/// its deadline passes unless taken back first, whatever deadlines were
/// added before it.
@Suite struct DeadlinesTests {
    @Test(.timeLimit(.minutes(TestTime.minutes(3)))) func aShortDeadlineAddedAfterLongOnesRunsAtItsOwnAndTheOthersWait() async throws {
        let deadlines = Deadlines()
        let ran = Mutex<[String]>([])
        let long = (0..<1000).map { i in deadlines.add(after: .seconds(3600)) { ran.withLock { $0.append("long \(i)") } } }
        let (done, finish) = AsyncStream.makeStream(of: Void.self)
        let short = deadlines.add(after: .milliseconds(20)) {
            ran.withLock { $0.append("short") }
            finish.yield()
        }
        for await _ in done { break }
        #expect(ran.withLock { $0 } == ["short"])
        #expect(!deadlines.remove(short), "an action that ran is not taken back")
        #expect(long.allSatisfy { deadlines.remove($0) } && deadlines.pending == 0)
        // Taken back before its deadline: never runs (the one added after it
        // runs, and the timer has gone off past the first one's deadline).
        // (A second between adding and taking back: a loaded machine may pause
        // a thread for a while, never for that long between two statements.)
        let first = deadlines.add(after: .seconds(1)) { ran.withLock { $0.append("taken back") } }
        #expect(deadlines.remove(first))
        let (later, end) = AsyncStream.makeStream(of: Void.self)
        _ = deadlines.add(after: .milliseconds(1200)) { end.yield() }
        for await _ in later { break }
        #expect(ran.withLock { $0 } == ["short"] && deadlines.pending == 0)
    }
}

@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"), .heavy)
struct PostgresBatchTests {
    static func session(_ id: String) throws -> Session {
        try Session(id: id, amount: Money(value: 1000, currency: "SAR"), country: "SA", orderID: "o-\(id)", capture: .manual,
                    createdAt: Date(timeIntervalSince1970: 1_700_000_000), expiresAt: .distantFuture)
    }

    static func answer(_ key: String, _ fingerprint: String) -> IdempotentAnswer {
        IdempotentAnswer(key: key, fingerprint: fingerprint, body: Data(#"{"ok":true}"#.utf8), reference: nil, createdAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    /// One batch: a stale session and a key bound to another request are
    /// each refused alone (nothing of them written); every other change in
    /// the batch is written, its events numbered.
    @Test func aChangeRefusedInABatchIsRefusedAloneAndTheOthersAreWritten() async throws {
        let logs = CapturedLogs()
        let store = try await TestPostgres.store(logger: logs.logger("test.postgres"))
        var stale = try Self.session("a")
        stale.version = 5
        let outcomes = await store.commit(batch: [
            StoreChange(session: try Self.session("a"), events: [SessionEvent(sessionID: "a", at: Date(), type: "session.created")]),
            StoreChange(session: try Self.session("b"), events: []),
            StoreChange(session: stale, events: [SessionEvent(sessionID: "a", at: Date(), type: "stale")]),
            StoreChange(session: try Self.session("c"), events: [], answer: Self.answer("k", "one")),
            StoreChange(session: try Self.session("d"), events: [], answer: Self.answer("k", "two")),
        ])
        #expect(outcomes.count == 5)
        #expect((try? outcomes[0].get())?.map(\.sequence) == [1])
        #expect((try? outcomes[1].get()) != nil && (try? outcomes[3].get()) != nil)
        #expect(throws: StoreConflict.staleSession(id: "a", expected: 5)) { try outcomes[2].get() }
        #expect(throws: StoreConflict.duplicateKey("k")) { try outcomes[4].get() }
        for id in ["a", "b", "c"] { #expect(try await store.sessionVersion(id) == 1, "\(id)") }
        #expect(try await store.session("d") == nil, "the refused change's session was written")
        #expect(try await store.events(ofSession: "a", after: 0).map(\.type) == ["session.created"])
        #expect(try await store.answer(forKey: "k")?.fingerprint == "one")
        #expect(!logs.all.contains { $0.contains("written on its own") }, "the refusals undid the whole batch: \(logs.all)")
        await store.close()
    }

    /// A batch that fails as a whole (here one change raises an error of its
    /// own, as a deadlock would undo the batch) is written again change by
    /// change: each other change is written, the failing one gets its error.
    @Test func aBatchThatFailsWholeIsWrittenChangeByChange() async throws {
        let logs = CapturedLogs()
        let store = try await TestPostgres.store(logger: logs.logger("test.postgres"))
        try await StoreKind.postgres.raw("""
            CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.id = 'boom' THEN RAISE EXCEPTION 'boom refused' USING ERRCODE = 'XX999'; END IF; RETURN NEW; END $$
            """, on: store)
        try await StoreKind.postgres.raw("CREATE TRIGGER refuse_boom BEFORE INSERT ON session FOR EACH ROW EXECUTE FUNCTION refuse_boom()", on: store)
        let outcomes = await store.commit(batch: [
            StoreChange(session: try Self.session("ok1"), events: [SessionEvent(sessionID: "ok1", at: Date(), type: "session.created")]),
            StoreChange(session: try Self.session("boom"), events: []),
            StoreChange(session: try Self.session("ok2"), events: [], answer: Self.answer("k2", "one")),
        ])
        #expect((try? outcomes[0].get())?.map(\.sequence) == [1] && (try? outcomes[2].get()) != nil)
        let failure = try #require(outcomes[1].failure as? PostgresStoreError, "\(outcomes[1])")
        #expect(failure.sqlState == "XX999" && failure.description == "PostgreSQL: boom refused (SQLSTATE XX999)", "\(failure)")
        #expect(try await store.sessionVersion("ok1") == 1)
        #expect(try await store.sessionVersion("ok2") == 1)
        #expect(try await store.session("boom") == nil)
        #expect(try await store.answer(forKey: "k2")?.fingerprint == "one")
        #expect(logs.all.filter { $0.contains("a batch of 3 commits failed") && $0.contains("XX999") && $0.contains("written on its own") }.count == 1,
                "\(logs.all)")
        // Written again only when the server refused the statement: a lost
        // connection or an answer that could not be read may have committed.
        #expect(PostgresCheckoutStore.refusedWhole(failure))
        #expect(!PostgresCheckoutStore.refusedWhole(StoreUnavailable("the database went away")))
        #expect(!PostgresCheckoutStore.refusedWhole(StoredDataError(description: "gateway_commit_many answered 2 rows for 3 changes")))
        await store.close()
    }
}

extension PostgresBatchTests {
    /// A batch whose transaction fails at its commit (here a deferred check;
    /// a full notification queue does the same) is known to have written
    /// nothing: its changes are written again one by one, each with its own
    /// outcome, and none is reported written that is not.
    @Test func aBatchRefusedAtItsCommitIsNeverReportedWritten() async throws {
        let store = try await TestPostgres.store()
        try await StoreKind.postgres.raw("""
            CREATE FUNCTION refuse_boom_late() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.id = 'boom' THEN RAISE EXCEPTION 'boom refused at commit' USING ERRCODE = 'XX998'; END IF; RETURN NULL; END $$
            """, on: store)
        try await StoreKind.postgres.raw("""
            CREATE CONSTRAINT TRIGGER refuse_boom_late AFTER INSERT ON session DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION refuse_boom_late()
            """, on: store)
        let outcomes = await store.commit(batch: [
            StoreChange(session: try Self.session("ok1"), events: []),
            StoreChange(session: try Self.session("boom"), events: [], answer: Self.answer("kb", "one")),
            StoreChange(session: try Self.session("ok2"), events: []),
        ])
        #expect((try? outcomes[0].get()) != nil && (try? outcomes[2].get()) != nil, "\(outcomes)")
        #expect((try? outcomes[1].get()) == nil, "a change undone at its commit was reported written")
        #expect(try await store.sessionVersion("ok1") == 1)
        #expect(try await store.sessionVersion("ok2") == 1)
        #expect(try await store.session("boom") == nil)
        #expect(try await store.answer(forKey: "kb") == nil)
        await store.close()
    }
}

extension PostgresBatchTests {
    /// Writing a refused batch's changes one by one holds the commit lane
    /// for one budget in all, not a deadline per change: the changes not
    /// reached within it fail, not written, saying so.
    @Test func writingARefusedBatchChangeByChangeStopsAtItsBudget() async throws {
        var configuration = try #require(TestPostgres.configuration)
        configuration.schema = TestPostgres.newSchema()
        configuration.callTimeout = .seconds(90)
        let store = PostgresCheckoutStore(configuration: configuration, logger: Logger(label: "test.postgres"), fallbackBudget: .milliseconds(500))
        _ = try await store.ready(within: .seconds(240))
        // The first change (in session order) takes a second to write, more
        // than the whole budget: the two after it are never tried.
        try await StoreKind.postgres.raw("""
            CREATE FUNCTION linger_or_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.id = 'a-slow' THEN PERFORM pg_sleep(1); END IF;
                IF NEW.id = 'b-boom' THEN RAISE EXCEPTION 'boom refused' USING ERRCODE = 'XX999'; END IF;
                RETURN NEW;
            END $$
            """, on: store)
        try await StoreKind.postgres.raw("CREATE TRIGGER linger_or_refuse BEFORE INSERT ON session FOR EACH ROW EXECUTE FUNCTION linger_or_refuse()", on: store)
        let outcomes = await store.commit(batch: [
            StoreChange(session: try Self.session("c-late"), events: []),
            StoreChange(session: try Self.session("b-boom"), events: []),
            StoreChange(session: try Self.session("a-slow"), events: []),
        ])
        #expect((try? outcomes[2].get()) != nil, "\(outcomes[2])")
        for index in [0, 1] {
            let late = try #require(outcomes[index].failure as? StoreUnavailable, "\(outcomes[index])")
            #expect(late.reason.contains("was not written"), "\(late)")
        }
        #expect(try await store.sessionVersion("a-slow") == 1)
        #expect(try await store.session("b-boom") == nil)
        #expect(try await store.session("c-late") == nil)
        await store.close()
    }

    /// A batch's answers are matched to its changes by the number the
    /// function gave each (`item_no`), not by the rows' order; a number
    /// missing, repeated or out of range fails the batch (before its COMMIT).
    @Test func aBatchsAnswersAreMatchedByItemNumberAndABadNumberingFailsIt() async throws {
        let store = try await TestPostgres.store()
        func rows(_ values: String) async throws -> [PostgresRow] {
            try await store.withConnection { connection, logger in
                var rows: [PostgresRow] = []
                for try await row in try await connection.query(PostgresQuery(unsafeSQL: "SELECT * FROM (VALUES \(values)) AS t(item_no, refusal, numbers)"), logger: logger) {
                    rows.append(row)
                }
                return rows
            }
        }
        let reversed = try PostgresChange.matched(try await rows("(2, 'GWKEY', NULL::bigint[]), (1, NULL::text, ARRAY[7]::bigint[])"), count: 2)
        #expect(reversed.map(\.refusal) == [nil, "GWKEY"] && reversed[0].numbers == [7])
        for bad in ["(1, NULL::text, NULL::bigint[]), (1, NULL, NULL)", "(1, NULL::text, NULL::bigint[]), (3, NULL, NULL)",
                    "(1, NULL::text, NULL::bigint[])", "(0, NULL::text, NULL::bigint[]), (1, NULL, NULL)"] {
            let fetched = try await rows(bad)
            #expect(throws: StoredDataError.self, "\(bad)") { try PostgresChange.matched(fetched, count: 2) }
        }
        await store.close()
    }
}

extension PostgresBatchTests {
    /// A batch none of whose changes is refused is written by one statement
    /// for each table (migration v6), without v2's `gateway_commit` a
    /// change: here that function is renamed away for the first two
    /// batches, and every kind of write still lands, numbered as before.
    @Test func aBatchNoneOfWhoseChangesIsRefusedIsWrittenWithoutTheChangeByChangePath() async throws {
        let logs = CapturedLogs()
        let store = try await TestPostgres.store(logger: logs.logger("test.postgres"))
        try await StoreKind.postgres.raw("ALTER FUNCTION gateway_commit RENAME TO gateway_commit_away", on: store)
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        let first = await store.commit(batch: [
            StoreChange(session: try Self.session("a"), events: [SessionEvent(sessionID: "a", at: at, type: .sessionCreated),
                                                                 SessionEvent(sessionID: "a", at: at, type: .init(rawValue: "noted"))],
                        answer: Self.answer("ka", "one")),
            StoreChange(session: try Self.session("b"), events: [], webhook: ("p", "evt-1")),
            StoreChange(session: nil, events: [], answer: IdempotentAnswer(key: "kp", fingerprint: "two", body: nil, createdAt: at)),
        ])
        #expect(first.map { (try? $0.get())?.map(\.sequence) } == [[1, 2], [], []], "\(first)")
        var a = try #require(try await store.session("a"))
        var attempt = Attempt(id: "att-a", method: "mada", providerID: "p", routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
        attempt.leaseUntil = at
        try a.start(attempt)
        let b = try #require(try await store.session("b"))
        let second = await store.commit(batch: [
            StoreChange(session: a, events: [SessionEvent(sessionID: "a", at: at, type: .init(rawValue: "attempt.created"), attemptID: "att-a")]),
            StoreChange(session: b, events: [SessionEvent(sessionID: "b", at: at, type: .init(rawValue: "noted"))]),
            StoreChange(session: nil, events: [], answer: IdempotentAnswer(key: "kp", fingerprint: "two", body: Data("{}".utf8), createdAt: at)),
        ])
        #expect(second.map { (try? $0.get())?.map(\.sequence) } == [[3], [1], []], "\(second)")
        #expect(try await store.sessionVersion("a") == 2)
        #expect(try await store.sessionVersion("b") == 2)
        #expect(try await store.session("a")?.attempts.map(\.id) == ["att-a"])
        #expect(try await store.sessionID(ofAttempt: "att-a") == "a")
        #expect(try await store.dueAttempts(at: at, limit: 10).map(\.attemptID) == ["att-a"])
        #expect(try await store.events(ofSession: "a", after: 0).map(\.type) == ["session.created", "noted", "attempt.created"])
        #expect(try await store.events(ofSession: "b", after: 0).map(\.sequence) == [1])
        #expect(try await store.answer(forKey: "ka")?.body == Data(#"{"ok":true}"#.utf8))
        #expect(try await store.answer(forKey: "kp")?.body == Data("{}".utf8))
        #expect(try await store.hasWebhook(provider: "p", eventID: "evt-1"))
        // A refusal needs the change-by-change path, which is away: the
        // refused batch fails whole, so it did not go this way.
        var stale = try Self.session("a")
        stale.version = 1
        let refused = await store.commit(batch: [StoreChange(session: stale, events: []), StoreChange(session: try Self.session("c"), events: [])])
        #expect((refused[0].failure as? PostgresStoreError)?.sqlState == "42883", "\(refused[0])")
        #expect((try? refused[1].get()) != nil, "\(refused[1])")
        try await StoreKind.postgres.raw("ALTER FUNCTION gateway_commit_away RENAME TO gateway_commit", on: store)
        await store.close()
    }

    /// Among changes each of a session of its own, one refused for each
    /// reason (a stale session, one that does not exist carrying an attempt,
    /// a key bound to another request, a notification already applied) is
    /// refused alone, with nothing of it written; the others are written,
    /// numbered, and the batch was not undone as a whole.
    @Test func aChangeRefusedAmongChangesOfSessionsOfTheirOwnIsRefusedAlone() async throws {
        let logs = CapturedLogs()
        let store = try await TestPostgres.store(logger: logs.logger("test.postgres"))
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        _ = try await store.commit(StoreChange(session: try Self.session("old"), events: [], answer: Self.answer("bound", "one"), webhook: ("p", "seen")))
        var stale = try Self.session("old")
        stale.version = 7
        // Stale too (no such session): its attempt is not written either.
        var ghost = try Self.session("ghost")
        ghost.version = 3
        try ghost.start(Attempt(id: "att-ghost", method: "mada", providerID: "p", routingReason: "test", requested: Money(value: 1000, currency: "SAR")))
        let outcomes = await store.commit(batch: [
            StoreChange(session: ghost, events: []),
            StoreChange(session: try Self.session("n1"), events: [SessionEvent(sessionID: "n1", at: at, type: .sessionCreated)]),
            StoreChange(session: stale, events: [SessionEvent(sessionID: "old", at: at, type: .init(rawValue: "stale"))]),
            StoreChange(session: try Self.session("n2"), events: [SessionEvent(sessionID: "n2", at: at, type: .sessionCreated)],
                        answer: Self.answer("bound", "two")),
            StoreChange(session: try Self.session("n3"), events: [], webhook: ("p", "seen")),
            StoreChange(session: try Self.session("n4"), events: [SessionEvent(sessionID: "n4", at: at, type: .sessionCreated)],
                        answer: Self.answer("fresh", "one")),
        ])
        #expect(throws: StoreConflict.staleSession(id: "ghost", expected: 3)) { try outcomes[0].get() }
        #expect((try? outcomes[1].get())?.map(\.sequence) == [1] && (try? outcomes[5].get())?.map(\.sequence) == [1], "\(outcomes)")
        #expect(throws: StoreConflict.staleSession(id: "old", expected: 7)) { try outcomes[2].get() }
        #expect(throws: StoreConflict.duplicateKey("bound")) { try outcomes[3].get() }
        #expect(throws: StoreConflict.duplicateWebhook(provider: "p", eventID: "seen")) { try outcomes[4].get() }
        #expect(try await store.sessionID(ofAttempt: "att-ghost") == nil)
        #expect(try await store.sessionVersion("old") == 1)
        #expect(try await store.events(ofSession: "old", after: 0).isEmpty)
        for id in ["n2", "n3"] { #expect(try await store.session(id) == nil, "\(id) was written") }
        #expect(try await store.answer(forKey: "bound")?.fingerprint == "one")
        #expect(try await store.answer(forKey: "fresh")?.fingerprint == "one")
        #expect(try await store.sessionVersion("n1") == 1)
        #expect(try await store.sessionVersion("n4") == 1)
        #expect(!logs.all.contains { $0.contains("written on its own") }, "the refusals undid the whole batch: \(logs.all)")
        await store.close()
    }
}

extension PostgresBatchTests {
    /// A connection keeps its plans, made while the tables are small (a new
    /// database), cheapest then as a scan of the whole session table: such
    /// a plan, kept, would cost a batch more with every session written. A
    /// batch's writes look each session up by id instead, however small the
    /// table: after batches updating sessions of a nearly empty table, no
    /// row was read by a scan of the whole table (PostgreSQL's own count;
    /// the migrations scanned it while empty, reading none).
    @Test func aBatchNeverScansTheSessionTableWhole() async throws {
        let store = try await TestPostgres.store()
        let ids = ["s1", "s2", "s3"]
        for outcome in await store.commit(batch: try ids.map { StoreChange(session: try Self.session($0), events: []) }) {
            _ = try outcome.get()
        }
        // No reads meanwhile: only the batches' own statements touch the table.
        for version in 1...8 {
            let outcomes = await store.commit(batch: try ids.map { id in
                var session = try Self.session(id)
                session.version = version
                return StoreChange(session: session, events: [SessionEvent(sessionID: id, at: Date(), type: "noted")])
            })
            for outcome in outcomes { #expect(try outcome.get().count == 1) }
        }
        // Each backend reports its counts when it is idle (within seconds):
        // wait until the updates are counted, then read the scans with them.
        let schema = store.configuration.schema
        func counts() async throws -> (updates: Int64, rowsReadByWholeScans: Int64) {
            try await store.withConnection { connection, logger in
                _ = try await connection.query("SELECT pg_stat_clear_snapshot()", logger: logger)
                let rows = try await connection.query(
                    "SELECT n_tup_upd, seq_tup_read FROM pg_stat_user_tables WHERE schemaname = \(schema) AND relname = 'session'", logger: logger)
                for try await (updates, scans) in rows.decode((Int64, Int64).self) { return (updates, scans) }
                return (0, 0)
            }
        }
        #expect(try await waitUntil(within: .seconds(120)) { (try? await counts())?.updates ?? 0 >= 24 })
        let final = try await counts()
        #expect(final.rowsReadByWholeScans == 0, "\(final)")
        await store.close()
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
