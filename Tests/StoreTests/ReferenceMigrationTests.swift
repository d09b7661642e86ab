import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
import PostgresNIO
@testable import PostgresCheckoutStore
@testable import SQLiteCheckoutStore
import TestSupport
import Testing

/// A store written before "one provider reference, one payment" is
/// migrated: each attempt's reference is filled in from its session's
/// document, so the older payments are held too; where two live or paid
/// attempts of one provider already share one (the defect the migration
/// closes), neither gets it, and the store keeps working.
@Suite struct ReferenceMigrationTests {
    /// Sessions of one attempt each: `(session, attempt, provider, reference, status)`.
    static let rows: [(String, String, String, String, AttemptStatus)] = [
        ("s1", "a1", "p", "R1", .succeeded),
        ("s2", "a2", "p", "D", .pending), ("s3", "a3", "p", "D", .succeeded),
        ("s4", "a4", "p", "F", .failed), ("s5", "a5", "p", "F", .pending),
        ("s6", "a6", "q", "R1", .authorized),
    ]

    static func session(_ row: (String, String, String, String, AttemptStatus)) throws -> Session {
        var session = try Session(id: row.0, amount: Money(value: 1000, currency: "SAR"), country: "SA", orderID: "o-\(row.0)", capture: .manual)
        var attempt = Attempt(id: row.1, method: "mada", providerID: row.2, routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
        attempt.providerReference = row.3
        try session.start(attempt)
        try session.move(attempt: row.1, to: row.4)
        return session
    }

    /// What the migrated store holds.
    static func expectMigrated(_ store: any CheckoutStore) async throws {
        #expect(try await store.attempt(ofProvider: "p", holding: "R1") == "a1")
        #expect(try await store.attempt(ofProvider: "q", holding: "R1") == "a6")
        #expect(try await store.attempt(ofProvider: "p", holding: "D") == nil, "a shared reference is given to neither")
        #expect(try await store.attempt(ofProvider: "p", holding: "F") == "a5")
        // The older payment is held: a new attempt under its reference is refused.
        var late = try session(("s7", "a7", "p", "R1", .pending))
        late.version = 0
        await #expect(throws: StoreConflict.referenceHeld(provider: "p", reference: "R1")) {
            try await store.commit(StoreChange(session: late, events: []))
        }
        // The sessions that shared one still take their next change.
        var shared = try #require(try await store.session("s3"))
        shared.updatedAt = Date(timeIntervalSince1970: 5)
        _ = try await store.commit(StoreChange(session: shared, events: []))
    }

    @Test func anSQLiteStoreWrittenBeforeGetsItsReferences() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("references-\(UUID().uuidString)/checkout.sqlite").path
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        let migrations = Migrations.migrator.migrations
        let references = try #require(migrations.firstIndex(of: "one provider reference, one payment"))
        do {
            let old = try DatabaseQueue(path: path)
            try Migrations.migrator.migrate(old, upTo: migrations[references - 1])
            try await old.write { db in
                for row in Self.rows {
                    let session = try Self.session(row)
                    try db.execute(sql: """
                        INSERT INTO session (id, status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events)
                        VALUES (?, ?, 1, 1000, 'SAR', ?, 0, 0, 1e12, ?, 0)
                        """, arguments: [row.0, session.status.rawValue, session.orderID, DocumentCoding.encode({ var s = session; s.version = 1; return s }())])
                    try db.execute(sql: "INSERT INTO attempt (id, session_id, provider_id, status, due_at) VALUES (?, ?, ?, ?, NULL)",
                                   arguments: [row.1, row.0, row.2, row.4.rawValue])
                }
            }
        }
        let store = try SQLiteCheckoutStore(path: path)
        try await Self.expectMigrated(store)
    }

    @Test(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"))
    func aPostgreSQLStoreWrittenBeforeGetsItsReferences() async throws {
        let store = try await TestPostgres.store()
        defer { Task { await store.close() } }
        // The schema as it was before v7: no column, no index, v7 not recorded.
        try await store.withConnection { connection, logger in
            _ = try await connection.query("ALTER TABLE attempt DROP COLUMN provider_reference", logger: logger)
            _ = try await connection.query("DELETE FROM schema_migration WHERE name = 'v7: one provider reference, one payment'", logger: logger)
            for row in Self.rows {
                var session = try Self.session(row)
                session.version = 1
                let document = DocumentCoding.encode(session)
                _ = try await connection.query("""
                    INSERT INTO session (id, status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events)
                    VALUES (\(row.0), \(session.status.rawValue), 1, 1000, 'SAR', \(session.orderID), 0, 0, 1e12, \(document), 0)
                    """, logger: logger)
                _ = try await connection.query("""
                    INSERT INTO attempt (id, session_id, provider_id, status, due_at) VALUES (\(row.1), \(row.0), \(row.2), \(row.4.rawValue), NULL)
                    """, logger: logger)
            }
            let applied = try await PostgresMigrations.migrate(connection, schema: "", logger: logger)
            #expect(applied.last == "v7: one provider reference, one payment")
        }
        try await Self.expectMigrated(store)
    }
}
