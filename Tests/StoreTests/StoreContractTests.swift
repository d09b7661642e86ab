import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
import PostgresNIO
@testable import PostgresCheckoutStore
@testable import SQLiteCheckoutStore
import TestSupport
import Testing

/// The stores the contract runs against: SQLite in memory and on disk, and
/// PostgreSQL when the tests run under `scripts/test-postgres` (always in CI).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqliteMemory, sqliteFile, postgres

    static var available: [StoreKind] { TestPostgres.isAvailable ? allCases : [.sqliteMemory, .sqliteFile] }

    var testDescription: String { rawValue }

    /// A new, empty store of this kind for `body`, closed after it.
    func withStore<T>(_ body: (any CheckoutStore & APIKeyStore) async throws -> T) async throws -> T {
        switch self {
        case .sqliteMemory:
            return try await body(SQLiteCheckoutStore.inMemory())
        case .sqliteFile:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)/checkout.sqlite").path
            return try await body(SQLiteCheckoutStore(path: path))
        case .postgres:
            let store = try await TestPostgres.store()
            do {
                let result = try await body(store)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
    }

    /// Runs `sql` around the store's API (a trigger or a constraint must
    /// refuse it); throws what the database answered.
    func raw(_ sql: String, on store: any CheckoutStore) async throws {
        switch store {
        case let sqlite as SQLiteCheckoutStore:
            try await sqlite.writer.write { db in try db.execute(sql: sql) }
        case let postgres as PostgresCheckoutStore:
            try await postgres.withConnection { connection, logger in
                _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            }
        default:
            Issue.record("no raw access to \(type(of: store))")
        }
    }
}

private func newSession(_ id: String, amount: Int64 = 1000, expiresAt: Date = .distantFuture) throws -> Session {
    try Session(id: id, amount: Money(value: amount, currency: "SAR"), country: "SA", orderID: "o-\(id)", capture: .manual,
                createdAt: Date(timeIntervalSince1970: 1_700_000_000), expiresAt: expiresAt)
}

private func event(_ session: String, _ type: SessionEvent.Kind) -> SessionEvent {
    SessionEvent(sessionID: session, at: Date(timeIntervalSince1970: 1_700_000_000.25), type: type)
}

/// Every behaviour of the store protocols, run against every store: the
/// engine's guarantees rest on these, on one host or on many.
@Suite struct StoreContractTests {
    /// CI runs the PostgreSQL cases; a CI without the test cluster fails here
    /// rather than passing with them left out.
    @Test func ciRunsThePostgreSQLCases() {
        #expect(!TestPostgres.requiredButMissing, "CI is set but GATEWAY_TEST_POSTGRES_URL is not: run the tests under scripts/test-postgres")
    }

    @Test(arguments: StoreKind.available)
    func aStaleWriteIsRefusedAndWritesNothing(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            var session = try newSession("s")
            _ = try await store.commit(StoreChange(session: session, events: [event("s", "session.created")]))
            session.version = 1
            _ = try await store.commit(StoreChange(session: session, events: []))
            await #expect(throws: StoreConflict.staleSession(id: "s", expected: 1)) {
                try await store.commit(StoreChange(session: session, events: [event("s", "lost")],
                                                   answer: IdempotentAnswer(key: "k", fingerprint: "f", body: nil, createdAt: Date())))
            }
            #expect(try await store.events(ofSession: "s", after: 0).map(\.type) == ["session.created"])
            #expect(try await store.session("s")?.version == 2)
            #expect(try await store.answer(forKey: "k") == nil, "the refused change's key was written")
            // A new session whose id exists is stale at version 0.
            await #expect(throws: StoreConflict.staleSession(id: "s", expected: 0)) {
                try await store.commit(StoreChange(session: try newSession("s"), events: []))
            }
        }
    }

    /// Of many writers of one version at once, exactly one wins; the others
    /// are told, and wrote nothing.
    @Test(arguments: StoreKind.available)
    func ofConcurrentWritersOfOneVersionExactlyOneWins(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let session = try newSession("s")
            _ = try await store.commit(StoreChange(session: session, events: []))
            var written = session
            written.version = 1
            let read = written
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<24 {
                    group.addTask {
                        do {
                            _ = try await store.commit(StoreChange(session: read, events: [event("s", "w\(i)")]))
                            return true
                        } catch let conflict as StoreConflict {
                            #expect(conflict == .staleSession(id: "s", expected: 1))
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            #expect(try await store.events(ofSession: "s", after: 0).count == 1)
            #expect(try await store.sessionVersion("s") == 2)
        }
    }

    /// Empty values stay empty (not NULL), large amounts and non-ASCII ids
    /// come back exactly, and every lookup of what is not there is nil.
    @Test(arguments: StoreKind.available)
    func valuesComeBackExactlyAsWritten(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let session = try Session(id: "s-é", amount: Money(value: 9_007_199_254_740_993, currency: "SAR"), country: nil,
                                      orderID: "", capture: .automatic)
            let stored = try await store.commit(StoreChange(
                session: session, events: [SessionEvent(sessionID: "s-é", at: Date(timeIntervalSince1970: 1.5), type: "session.created",
                                                        amount: Money(value: 7, currency: "KWD"), detail: "")],
                answer: IdempotentAnswer(key: "k", fingerprint: "f", body: Data(), reference: "", createdAt: Date(timeIntervalSince1970: 1.5))))
            #expect(stored.map(\.sequence) == [1])
            let read = try #require(try await store.session("s-é"))
            #expect(read.orderID == "" && read.amount.value == 9_007_199_254_740_993 && read.version == 1)
            #expect(try await store.sessionVersion("s-é") == 1)
            let answer = try #require(try await store.answer(forKey: "k"))
            #expect(answer.body == Data() && answer.reference == "" && answer.fingerprint == "f" && answer.createdAt.timeIntervalSince1970 == 1.5)
            #expect(try await store.answer(forKey: "absent") == nil)
            #expect(try await store.session("absent") == nil)
            #expect(try await store.sessionVersion("absent") == nil)
            #expect(try await store.sessionID(ofAttempt: "absent") == nil)
            let recorded = try #require(try await store.events(ofSession: "s-é", after: 0).first)
            #expect(recorded.detail == "" && recorded.attemptID == nil && recorded.amount == Money(value: 7, currency: "KWD"))
            #expect(recorded.at.timeIntervalSince1970 == 1.5 && recorded.type == .sessionCreated && recorded.sequence == 1)
        }
    }

    /// A provider's text may hold any character, U+0000 included (JSON
    /// allows it; PostgreSQL's text does not): the change is written, never
    /// refused for it, and the text comes back the same on every store.
    @Test(arguments: StoreKind.available)
    func textWithANullCharacterIsWritten(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let detail = "declined\u{0000} by the issuer"
            let stored = try await store.commit(StoreChange(
                session: try newSession("nul"), events: [SessionEvent(sessionID: "nul", at: Date(timeIntervalSince1970: 1.5), type: "attempt.failed",
                                                                      status: "failed\u{0000}", detail: detail)],
                answer: IdempotentAnswer(key: "k", fingerprint: "f", body: nil, reference: "ref\u{0000}", createdAt: Date(timeIntervalSince1970: 1.5))))
            #expect(stored.map(\.sequence) == [1] && stored[0].detail == "declined\u{FFFD} by the issuer")
            let recorded = try #require(try await store.events(ofSession: "nul", after: 0).first)
            #expect(recorded.detail == "declined\u{FFFD} by the issuer" && recorded.status == "failed\u{FFFD}", "\(String(reflecting: recorded.detail))")
            #expect(try await store.answer(forKey: "k")?.reference == "ref\u{FFFD}")
            // A lookup by a value with one finds nothing rather than failing.
            #expect(try await store.session("nul\u{0000}") == nil)
            #expect(try await store.answer(forKey: "k\u{0000}") == nil)
        }
    }

    /// A key is bound by its intent (no answer); the answer fills it in once,
    /// for the same request only. Another request under the key is refused,
    /// and the change it came with is not written.
    @Test(arguments: StoreKind.available)
    func anIdempotencyKeyIsBoundToItsFirstRequest(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let at = Date(timeIntervalSince1970: 1_700_000_000)
            _ = try await store.commit(StoreChange(session: try newSession("a"), events: [],
                                                   answer: IdempotentAnswer(key: "k", fingerprint: "f1", body: nil, reference: "att_1", createdAt: at)))
            #expect(try await store.answer(forKey: "k") == IdempotentAnswer(key: "k", fingerprint: "f1", body: nil, reference: "att_1", createdAt: at))
            // Another request under the key: refused, its session not written.
            await #expect(throws: StoreConflict.duplicateKey("k")) {
                try await store.commit(StoreChange(session: try newSession("b"), events: [event("b", "session.created")],
                                                   answer: IdempotentAnswer(key: "k", fingerprint: "f2", body: Data("{}".utf8), createdAt: at)))
            }
            #expect(try await store.session("b") == nil)
            #expect(try await store.events(ofSession: "b", after: 0).isEmpty)
            // The same request's answer fills it in.
            _ = try await store.commit(StoreChange(session: nil, events: [],
                                                   answer: IdempotentAnswer(key: "k", fingerprint: "f1", body: Data("{\"a\":1}".utf8), reference: "att_1", createdAt: at)))
            #expect(try await store.answer(forKey: "k")?.body == Data("{\"a\":1}".utf8))
            // Once answered, never again, even by the same request.
            await #expect(throws: StoreConflict.duplicateKey("k")) {
                try await store.commit(StoreChange(session: nil, events: [],
                                                   answer: IdempotentAnswer(key: "k", fingerprint: "f1", body: Data("{\"a\":2}".utf8), createdAt: at)))
            }
            #expect(try await store.answer(forKey: "k")?.body == Data("{\"a\":1}".utf8))
        }
    }

    /// Many first tries of one key at once: one binds it, every other is refused.
    @Test(arguments: StoreKind.available)
    func concurrentFirstTriesOfOneKeyBindItOnce(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let won = try await withThrowingTaskGroup(of: String?.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        do {
                            _ = try await store.commit(StoreChange(
                                session: try newSession("s\(i)"), events: [],
                                answer: IdempotentAnswer(key: "k", fingerprint: "f\(i)", body: Data("\(i)".utf8), createdAt: Date())))
                            return "s\(i)"
                        } catch StoreConflict.duplicateKey {
                            return nil
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { if let id = $1 { $0.append(id) } }
            }
            #expect(won.count == 1)
            let bound = try #require(try await store.answer(forKey: "k"))
            #expect(bound.fingerprint == "f" + won[0].dropFirst())
            for i in 0..<20 where "s\(i)" != won[0] { #expect(try await store.session("s\(i)") == nil) }
        }
    }

    /// Each session's events are numbered 1, 2, 3, ... in commit order, none
    /// skipped or given twice, with commits on many sessions at once.
    @Test(arguments: StoreKind.available)
    func eventsAreNumberedPerSessionWithoutGapsUnderConcurrentCommits(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            for s in 0..<4 { _ = try await store.commit(StoreChange(session: try newSession("s\(s)"), events: [event("s\(s)", "session.created")])) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for s in 0..<4 {
                    group.addTask {
                        // Each writer reads the version and retries when another got there first.
                        var written = 0
                        while written < 10 {
                            var session = try #require(try await store.session("s\(s)"))
                            session.updatedAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(written))
                            do {
                                let stored = try await store.commit(StoreChange(session: session, events: [event("s\(s)", "a\(written)"), event("s\(s)", "b\(written)")]))
                                #expect(stored[1].sequence == stored[0].sequence + 1)
                                written += 1
                            } catch is StoreConflict {}
                        }
                    }
                    group.addTask {
                        // Events of a session with no row yet (tools write these).
                        for i in 0..<10 { _ = try await store.commit(StoreChange(session: nil, events: [event("free\(s)", "e\(i)")])) }
                    }
                }
                try await group.waitForAll()
            }
            for s in 0..<4 {
                let recorded = try await store.events(ofSession: "s\(s)", after: 0)
                #expect(recorded.map(\.sequence) == Array(1...21))
                #expect(recorded.dropFirst().map(\.type.rawValue) == (0..<10).flatMap { ["a\($0)", "b\($0)"] })
                #expect(try await store.events(ofSession: "s\(s)", after: 15).map(\.sequence) == Array(16...21))
                #expect(try await store.events(ofSession: "free\(s)", after: 0).map(\.sequence) == Array(1...10))
            }
        }
    }

    /// The event log cannot be edited or emptied around the store.
    @Test(arguments: StoreKind.available)
    func theEventLogIsAppendOnly(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.commit(StoreChange(session: try newSession("s"), events: [event("s", "session.created")]))
            await #expect(throws: (any Error).self) { try await kind.raw("UPDATE event SET type = 'x'", on: store) }
            await #expect(throws: (any Error).self) { try await kind.raw("DELETE FROM event", on: store) }
            if kind == .postgres {
                await #expect(throws: (any Error).self) { try await kind.raw("TRUNCATE event", on: store) }
            }
            // A number given twice is refused.
            await #expect(throws: (any Error).self) {
                try await kind.raw("INSERT INTO event (session_id, number, at, type) VALUES ('s', 1, 0, 'twice')", on: store)
            }
            #expect(try await store.events(ofSession: "s", after: 0).map(\.type) == ["session.created"])
        }
    }

    /// Attempts are found by id; what is due for reconciliation is what a
    /// processing attempt's lease, a pending one's next check, or a held
    /// operation's next check says; sessions past their deadline expire only
    /// with nothing live.
    @Test(arguments: StoreKind.available)
    func dueWorkHeldPaymentsAndExpiredSessions(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let now = Date(timeIntervalSince1970: 1_700_000_100)
            // s1: processing, lease ended; s2: processing, lease running;
            // s3: pending, checked later; s4: pending, due; s5: authorized with
            // a capture held; s6: expired, nothing live; s7: expired, one live.
            func commit(_ id: String, expires: Date = .distantFuture, _ edit: (inout Session) throws -> Void) async throws {
                var session = try newSession(id, expiresAt: expires)
                try edit(&session)
                _ = try await store.commit(StoreChange(session: session, events: []))
            }
            func attempt(_ id: String) -> Attempt {
                Attempt(id: id, method: "mada", providerID: "p", routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
            }
            try await commit("s1") { var a = attempt("a1"); a.leaseUntil = now.addingTimeInterval(-10); try $0.start(a) }
            try await commit("s2") { var a = attempt("a2"); a.leaseUntil = now.addingTimeInterval(60); try $0.start(a) }
            try await commit("s3") {
                try $0.start(attempt("a3")); try $0.move(attempt: "a3", to: .pending)
                try $0.update(attempt: "a3") { $0.nextCheckAt = now.addingTimeInterval(30) }
            }
            try await commit("s4") {
                try $0.start(attempt("a4")); try $0.move(attempt: "a4", to: .pending)
                try $0.update(attempt: "a4") { $0.nextCheckAt = now.addingTimeInterval(-5) }
            }
            try await commit("s5") {
                try $0.start(attempt("a5")); try $0.move(attempt: "a5", to: .authorized)
                try $0.hold(PaymentBalance.InFlight(operation: .capture, amount: 400, nextCheckAt: now.addingTimeInterval(500)), key: "cap-1", of: "a5")
            }
            try await commit("s6", expires: now.addingTimeInterval(-1)) { _ in }
            try await commit("s7", expires: now.addingTimeInterval(-1)) { var a = attempt("a7"); a.leaseUntil = now.addingTimeInterval(-20); try $0.start(a) }

            #expect(try await store.sessionID(ofAttempt: "a4") == "s4")
            #expect(try await store.dueAttempts(at: now, limit: 10).map(\.attemptID) == ["a7", "a1", "a4"], "oldest due first")
            #expect(try await store.dueAttempts(at: now, limit: 2).map(\.attemptID) == ["a7", "a1"])
            #expect(try await store.dueAttempts(at: now.addingTimeInterval(1000), limit: 10).map(\.attemptID) == ["a7", "a1", "a4", "a3", "a2", "a5"])
            #expect(try await store.heldPayments(limit: 10) == [AttemptRef(sessionID: "s5", attemptID: "a5")])
            #expect(try await store.expiredSessions(at: now, limit: 10) == ["s6"])

            // Once final, an attempt is due no more.
            var s4 = try #require(try await store.session("s4"))
            try s4.move(attempt: "a4", to: .failed)
            _ = try await store.commit(StoreChange(session: s4, events: []))
            #expect(try await store.dueAttempts(at: now, limit: 10).map(\.attemptID) == ["a7", "a1"])
        }
    }

    /// Reconciliation's claims: hosts claiming at once get disjoint attempts;
    /// a claim keeps others off until it ends or the attempt's next commit
    /// moves it; a claimant may take its own again. (A store one host uses
    /// answers every due attempt: the default.)
    @Test(arguments: StoreKind.available)
    func dueAttemptsAreClaimedByOneHostAtATime(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let now = Date(timeIntervalSince1970: 1_700_000_100)
            for i in 0..<40 {
                var session = try newSession("s\(i)")
                var a = Attempt(id: "a\(i)", method: "mada", providerID: "p", routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
                a.leaseUntil = now.addingTimeInterval(-Double(100 - i))
                try session.start(a)
                _ = try await store.commit(StoreChange(session: session, events: []))
            }
            let until = now.addingTimeInterval(60)
            let claims = try await withThrowingTaskGroup(of: (String, [AttemptRef]).self) { group in
                for host in ["h1", "h2", "h3"] {
                    group.addTask { (host, try await store.claimDueAttempts(at: now, limit: 20, claimant: host, until: until)) }
                }
                return try await group.reduce(into: [String: [AttemptRef]]()) { $0[$1.0] = $1.1 }
            }
            let all = claims.values.flatMap { $0.map(\.attemptID) }
            guard kind == .postgres else {
                // One host per SQLite file: every claim answers what is due.
                #expect(claims.values.allSatisfy { $0.count == 20 })
                return
            }
            #expect(all.count == 40 && Set(all).count == 40, "an attempt was claimed twice, or one left out: \(claims)")
            for refs in claims.values {
                #expect(refs.map(\.attemptID) == refs.sorted { Int($0.attemptID.dropFirst())! < Int($1.attemptID.dropFirst())! }.map(\.attemptID), "oldest due first")
            }
            // Claimed by others: nothing for a fourth host until the claims end.
            #expect(try await store.claimDueAttempts(at: now, limit: 50, claimant: "h4", until: until).isEmpty)
            // A claimant takes its own again.
            let h1 = Set(claims["h1", default: []].map(\.attemptID))
            #expect(Set(try await store.claimDueAttempts(at: now, limit: 50, claimant: "h1", until: until).map(\.attemptID)) == h1)
            // A commit that moves an attempt's due time ends its claim.
            let moved = try #require(claims.values.first { !$0.isEmpty }?.first)
            var session = try #require(try await store.session(moved.sessionID))
            try session.update(attempt: moved.attemptID) { $0.leaseUntil = now.addingTimeInterval(-1) }
            _ = try await store.commit(StoreChange(session: session, events: []))
            #expect(try await store.claimDueAttempts(at: now, limit: 50, claimant: "h4", until: until).map(\.attemptID) == [moved.attemptID])
            // Past the claims' end, every due attempt is anyone's.
            #expect(try await store.claimDueAttempts(at: until, limit: 50, claimant: "h5", until: until.addingTimeInterval(60)).count == 40)
        }
    }

    /// A provider's notification is applied once: a second with its id is
    /// refused with its change, and the first is remembered.
    @Test(arguments: StoreKind.available)
    func aNotificationIsAppliedOnce(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.commit(StoreChange(session: try newSession("s"), events: [], webhook: ("p", "evt-1")))
            #expect(try await store.hasWebhook(provider: "p", eventID: "evt-1"))
            #expect(try await !store.hasWebhook(provider: "p", eventID: "evt-2"))
            #expect(try await !store.hasWebhook(provider: "q", eventID: "evt-1"))
            var session = try #require(try await store.session("s"))
            session.updatedAt = Date()
            await #expect(throws: StoreConflict.duplicateWebhook(provider: "p", eventID: "evt-1")) {
                try await store.commit(StoreChange(session: session, events: [event("s", "twice")], webhook: ("p", "evt-1")))
            }
            #expect(try await store.sessionVersion("s") == 1)
            #expect(try await store.events(ofSession: "s", after: 0).isEmpty)
        }
    }

    /// API keys: kept by hash, listed oldest first, revoked once (the first
    /// time kept), never deleted.
    @Test(arguments: StoreKind.available)
    func apiKeysAreKeptByHashAndRevokedOnce(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = APIKeyRecord(id: "key_1", name: "shop", mode: .test, hash: String(repeating: "a", count: 64), prefix: "gk_test_aa…",
                                     createdAt: Date(timeIntervalSince1970: 100))
            let second = APIKeyRecord(id: "key_2", name: nil, mode: .live, hash: String(repeating: "b", count: 64), prefix: "gk_live_bb…",
                                      createdAt: Date(timeIntervalSince1970: 200))
            try await store.createAPIKey(second)
            try await store.createAPIKey(first)
            #expect(try await store.apiKey(hash: first.hash) == first)
            #expect(try await store.apiKey(hash: String(repeating: "c", count: 64)) == nil)
            #expect(try await store.apiKeys() == [first, second])
            await #expect(throws: (any Error).self, "a hash known already") {
                try await store.createAPIKey(APIKeyRecord(id: "key_3", name: nil, mode: .test, hash: first.hash, prefix: "x", createdAt: Date()))
            }
            let revoked = try #require(try await store.revokeAPIKey(id: "key_2", at: Date(timeIntervalSince1970: 300)))
            #expect(revoked.revokedAt == Date(timeIntervalSince1970: 300))
            #expect(try await store.revokeAPIKey(id: "key_2", at: Date(timeIntervalSince1970: 400))?.revokedAt == Date(timeIntervalSince1970: 300))
            #expect(try await store.revokeAPIKey(id: "key_9", at: Date()) == nil)
            #expect(try await store.apiKeys().map(\.id) == ["key_1", "key_2"])
        }
    }

    /// One provider reference is one payment: an attempt whose reference
    /// another live or paid attempt of the same provider holds refuses its
    /// change (nothing of it written), alone or batched with others; a
    /// failed attempt's reference, or another provider's, holds nothing.
    @Test(arguments: StoreKind.available)
    func aProviderReferenceIsHeldByOnePayment(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            func session(_ id: String, provider: String = "p", reference: String, _ status: AttemptStatus) throws -> Session {
                var session = try newSession(id)
                var attempt = Attempt(id: "a-\(id)", method: "mada", providerID: provider, routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
                attempt.providerReference = reference
                try session.start(attempt)
                if status != .processing { try session.move(attempt: attempt.id, to: status) }
                return session
            }
            _ = try await store.commit(StoreChange(session: try session("s1", reference: "R", .authorized), events: []))
            await #expect(throws: StoreConflict.referenceHeld(provider: "p", reference: "R")) {
                try await store.commit(StoreChange(session: try session("s2", reference: "R", .pending), events: [event("s2", "lost")],
                                                   answer: IdempotentAnswer(key: "k2", fingerprint: "f", body: nil, createdAt: Date())))
            }
            #expect(try await store.session("s2") == nil, "the refused change wrote its session")
            #expect(try await store.answer(forKey: "k2") == nil, "the refused change wrote its key")
            #expect(try await store.events(ofSession: "s2", after: 0).isEmpty)
            // Another provider's reference; a failed attempt's, which holds nothing.
            _ = try await store.commit(StoreChange(session: try session("s3", provider: "q", reference: "R", .pending), events: []))
            _ = try await store.commit(StoreChange(session: try session("s4", reference: "F", .failed), events: []))
            _ = try await store.commit(StoreChange(session: try session("s5", reference: "F", .pending), events: []))
            #expect(try await store.attempt(ofProvider: "p", holding: "R") == "a-s1")
            #expect(try await store.attempt(ofProvider: "q", holding: "R") == "a-s3")
            #expect(try await store.attempt(ofProvider: "p", holding: "F") == "a-s5")
            #expect(try await store.attempt(ofProvider: "p", holding: "absent") == nil)
            // A reference given later, by an update, is held the same.
            var s5 = try #require(try await store.session("s5"))
            try s5.update(attempt: "a-s5") { $0.providerReference = "R" }
            await #expect(throws: StoreConflict.referenceHeld(provider: "p", reference: "R")) {
                try await store.commit(StoreChange(session: s5, events: []))
            }
            #expect(try await store.session("s5")?.attempts.first?.providerReference == "F")
            // Many changes at once (one batch where the store gathers them):
            // of eight sessions taking one reference, one is written.
            let written = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await store.commit(StoreChange(session: try session("t\(i)", reference: "T", .pending), events: [event("t\(i)", "started")]))
                            return true
                        } catch let conflict as StoreConflict {
                            #expect(conflict == .referenceHeld(provider: "p", reference: "T"))
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(written.filter { $0 }.count == 1, "\(written)")
            var stored = 0
            for i in 0..<8 { stored += try await store.session("t\(i)") == nil ? 0 : 1 }
            #expect(stored == 1)
        }
    }

    /// Through the engine: a provider that answers a second payment
    /// `succeeded` under the first one's reference has that payment left
    /// live, its outcome unknown (a protocol violation, logged and recorded
    /// as an event), never `succeeded`; its session stays unpaid, and a
    /// verify that says the same again changes nothing.
    @Test(arguments: StoreKind.available)
    func aSecondPaymentUnderAnotherPaymentsReferenceIsNeverSucceeded(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            // Every answer names one reference.
            let provider = ScriptedProvider("a") { call in
                var result = ScriptedProvider.success(call)
                result.providerReference = "same-reference"
                return .answered(result)
            }
            let checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider)]), fingerprintKey: testKey)
            let request = NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o")
            let first = try await checkout.createSession(request)
            let paid = try await checkout.attempt(session: first.session.id, NewAttempt(method: "visa"))
            #expect(paid.status == .succeeded && paid.providerReference == "same-reference")

            let second = try await checkout.createSession(request)
            let twice = try await checkout.attempt(session: second.session.id, NewAttempt(method: "visa"), idempotencyKey: "pay-2")
            #expect(twice.status == .pending, "a second payment under one reference was recorded \(twice.status)")
            #expect(twice.providerReference == nil)
            #expect(twice.problem?.code == .providerError && twice.problem?.detail.contains("protocol violation") == true, "\(String(describing: twice.problem))")
            let events = try await store.events(ofSession: second.session.id, after: 0).map(\.type)
            #expect(events.contains("attempt.protocol_violation") && !events.contains("session.completed"), "\(events)")
            let verified = try await checkout.verify(attempt: twice.id)
            #expect(verified.status == .pending && verified.providerReference == nil)
            #expect(try await checkout.session(second.session.id).session.status == .open)
            #expect(try await store.attempt(ofProvider: "a", holding: "same-reference") == paid.id)
        }
    }

    /// The whole engine on each store: a card payment, with the number and
    /// CVV passed to the adapter and found nowhere in the store.
    @Test(arguments: StoreKind.available)
    func noInstrumentReachesTheStore(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let provider = ScriptedProvider.approving("a")
            let checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider)]), fingerprintKey: testKey)
            let session = try await checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"))
            let pan = "4111111111111111"
            let paid = try await checkout.attempt(session: session.session.id, NewAttempt(method: "visa", instrument: ["number": .string(pan), "cvv": .string("737")]),
                                                  idempotencyKey: "k")
            #expect(paid.status == .succeeded)
            let stored = try #require(try await store.session(session.session.id))
            #expect(stored.attempts.count == 1)
            let document = DocumentCoding.encode(stored)
            #expect(document.range(of: Data(pan.utf8)) == nil && document.range(of: Data("\"737\"".utf8)) == nil)
            for event in try await store.events(ofSession: session.session.id, after: 0) {
                #expect(!(event.detail ?? "").contains(pan))
            }
            if case .authorize(let r) = provider.calls.first { #expect(r.instrument?["number"] == .string(pan)) } else { Issue.record("no authorize") }
        }
    }
}
