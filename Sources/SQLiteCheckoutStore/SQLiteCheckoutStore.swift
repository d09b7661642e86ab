import CheckoutEngine
import Foundation
import GRDB
import Synchronization

/// The engine's store on SQLite, through GRDB.
///
/// - WAL journal with `synchronous = FULL`: a commit is on disk when it returns.
///   The log is checkpointed by a ``Checkpointer`` thread, not by the writer.
/// - Group commit: changes submitted while a transaction is being written are
///   written together in the next one, which pays one fsync for many payments.
///   A refused change (a conflict, found before it writes anything) or a
///   failed one (undone alone, see ``CommitBatcher``) never takes the others
///   down. The writer thread only binds and steps: documents are encoded by
///   each submitter, and the hot statements, prepared once, are bound from
///   typed values through SQLite's C API (``StatementSet``).
/// - Point lookups run on the calling thread, on raw read-only connections of
///   the store's own (``Readers``); ids are time-ordered, so new rows land at the
///   right edge of each index.
/// - Sessions are JSON documents (they hold no instrument, so no card data);
///   attempts are indexed beside them for payment lookups and reconciliation;
///   events are an append-only table that triggers keep append-only, each
///   numbered in its session (1, 2, 3, ...) by the writer inside the commit's
///   transaction, a unique index refusing a number twice.
/// - Schema changes are named migrations in ``Migrations``.
public final class SQLiteCheckoutStore: CheckoutStore, Sendable {
    let writer: any DatabaseWriter
    private let batcher: CommitBatcher
    /// Checkpoints the log off the writer, after commits (on-disk databases only).
    private let checkpointer: Checkpointer?
    /// Connections for point lookups (on-disk databases only).
    private let readers: Readers?

    /// Opens (creating if needed) the database at `path` and migrates it.
    public convenience init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)  // the lookup connections' too (Readers)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Checkpointer.writerLimitPages)")
        }
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        let pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB sets `synchronous = NORMAL` on the writer when it turns WAL on,
        // after `prepareDatabase`: a commit would then reach the disk only at
        // the next checkpoint, and a payment acknowledged after its commit
        // could be lost with the machine. Back to FULL: each commit is synced.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try self.init(writer: pool, readers: Readers(path: path, busyTimeoutMilliseconds: 10_000, count: 4),
                      checkpointer: Checkpointer(path: path, configuration: configuration))
    }

    /// A store in memory, for tests and throwaway runs.
    public static func inMemory() throws -> SQLiteCheckoutStore {
        try SQLiteCheckoutStore(writer: DatabaseQueue())
    }

    /// A store over a GRDB writer of the caller's (tests: a trigger on the
    /// queue). Internal: the module's API names no GRDB type.
    convenience init(writer: any DatabaseWriter) throws {
        try self.init(writer: writer, readers: nil, checkpointer: nil)
    }

    private init(writer: any DatabaseWriter, readers: Readers?, checkpointer: Checkpointer?) throws {
        self.writer = writer
        self.readers = readers
        self.checkpointer = checkpointer
        try Migrations.migrator.migrate(writer)
        self.batcher = CommitBatcher(writer: writer)
    }

    /// The migrations applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try writer.read { db in try Migrations.migrator.appliedMigrations(db) }
    }

    // MARK: CheckoutStore

    /// Stops the checkpointer's thread. The database files close when the
    /// last reference to the store goes (GRDB closes its pool then).
    public func close() async {
        checkpointer?.stop()
    }

    public func commit(_ change: StoreChange) async throws -> [SessionEvent] {
        let prepared = try PreparedChange(change)
        let events = try await batcher.submit(prepared)
        checkpointer?.nudge()
        return events
    }

    public func session(_ id: String) async throws -> Session? {
        let document = try lookup { try $0.run(.sessionDocument, id) { try $0.step() ? $0.data(0) : nil } }
        return try document.map { try DocumentCoding.decode(Session.self, from: $0) }
    }

    public func sessionVersion(_ id: String) async throws -> Int? {
        try lookup { try $0.run(.sessionVersion, id) { try $0.step() ? Int($0.int64(0)) : nil } }
    }

    public func sessionID(ofAttempt attemptID: String) async throws -> String? {
        try lookup { try $0.run(.sessionOfAttempt, attemptID) { try $0.step() ? $0.text(0) : nil } }
    }

    public func attempt(ofProvider provider: String, holding reference: String) async throws -> String? {
        try lookup { try $0.run(.attemptHoldingReference, provider, StoredText.storable(reference)) { try $0.step() ? $0.text(0) : nil } }
    }

    public func answer(forKey key: String) async throws -> IdempotentAnswer? {
        try lookup { connection in
            try connection.run(.key, key) { row in
                guard try row.step() else { return nil }
                return IdempotentAnswer(key: key, fingerprint: row.text(0) ?? "", body: row.data(1), reference: row.text(2),
                                        createdAt: Date(timeIntervalSince1970: row.double(3)))
            }
        }
    }

    /// A point lookup by primary key: one SELECT, which SQLite runs in its own
    /// read transaction (so it needs no explicit one), on the calling thread
    /// and a free lookup connection. Such a read takes microseconds; a hop to
    /// a reader's queue and back costs more than the read itself. (A store in
    /// memory has no lookup connections: its lookups borrow its one.)
    private func lookup<T>(_ body: (StatementSet<Readers.Lookup>) throws -> T) throws -> T {
        if let readers { return try readers.withConnection(body) }
        return try writer.unsafeRead { db in
            guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store is closed") }
            return try body(StatementSet(borrowing: connection))
        }
    }

    public func events(ofSession id: String, after: Int64) async throws -> [SessionEvent] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT number, session_id, at, type, attempt_id, status, provider_id, amount, currency, detail
                FROM event WHERE session_id = ? AND number > ? ORDER BY number
                """, arguments: [id, after]).map(EventRow.event(from:))
        }
    }

    public func dueAttempts(at now: Date, limit: Int) async throws -> [AttemptRef] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, session_id FROM attempt WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at LIMIT ?
                """, arguments: [now.timeIntervalSince1970, limit]).map {
                AttemptRef(sessionID: $0["session_id"], attemptID: $0["id"])
            }
        }
    }

    public func heldPayments(limit: Int) async throws -> [AttemptRef] {
        // A payment (succeeded or authorized) is due only while it holds an operation.
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, session_id FROM attempt
                WHERE due_at IS NOT NULL AND status IN ('succeeded', 'authorized') ORDER BY due_at LIMIT ?
                """, arguments: [limit]).map {
                AttemptRef(sessionID: $0["session_id"], attemptID: $0["id"])
            }
        }
    }

    public func expiredSessions(at now: Date, limit: Int) async throws -> [String] {
        try await writer.read { db in
            try String.fetchAll(db, sql: """
                SELECT id FROM session
                WHERE status = 'open' AND expires_at <= ?
                  AND NOT EXISTS (SELECT 1 FROM attempt WHERE attempt.session_id = session.id AND attempt.due_at IS NOT NULL)
                ORDER BY expires_at LIMIT ?
                """, arguments: [now.timeIntervalSince1970, limit])
        }
    }

    public func hasWebhook(provider: String, eventID: String) async throws -> Bool {
        try await writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM webhook WHERE provider_id = ? AND event_id = ?", arguments: [provider, eventID]) ?? false
        }
    }
}
