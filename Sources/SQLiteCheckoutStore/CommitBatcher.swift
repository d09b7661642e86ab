import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
import Synchronization

/// A change made ready for writing: encoded on the submitter's thread, so
/// that the single writer thread only binds and steps (``StatementSet``).
///
/// Its usual conflicts (a stale session, a used notification) are found
/// before its first write, so a refused change has written nothing and needs
/// no savepoint. An error after its first write is ``Partial``: that includes
/// an idempotency key bound to another request, which the engine's own check
/// has almost always refused before the change was made (only another host
/// on the same store can race it here), so the one statement that writes a
/// key also checks it.
struct PreparedChange: Sendable {
    private let session: StoreRows.SessionRow?
    private let attempts: [StoreRows.AttemptRow]
    private let events: [SessionEvent]
    private let answer: IdempotentAnswer?
    private let webhook: (provider: String, eventID: String, receivedAt: Double)?

    /// A change failed after it had written something: only a savepoint (or
    /// the whole transaction) can undo it.
    struct Partial: Error {
        var underlying: any Error
    }

    init(_ change: StoreChange) throws {
        let rows = StoreRows(change)
        session = rows.session
        attempts = rows.attempts
        events = change.events
        answer = change.answer
        webhook = change.webhook.map { ($0.provider, $0.eventID, Date().timeIntervalSince1970) }
    }

    /// The statements a change is written with, on the writer's connection.
    enum Statement: Int, StatementKind {
        case webhookSeen, insertSession, updateSession, writeAttempt, nextEventNumber, insertEvent, countEvents, writeKey, insertWebhook

        var position: Int { rawValue }

        var sql: String {
            switch self {
            case .webhookSeen: "SELECT 1 FROM webhook WHERE provider_id = ? AND event_id = ?"
            case .insertSession: """
                INSERT INTO session (id, status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            // Writes nothing unless the stored version is the one read.
            case .updateSession: """
                UPDATE session SET status = ?, version = ?, amount = ?, currency = ?, order_id = ?, created_at = ?,
                    updated_at = ?, expires_at = ?, document = ?, events = events + ?
                WHERE id = ? AND version = ?
                RETURNING events
                """
            // A reference another live or paid attempt of the provider holds
            // fails the statement (attempt_provider_reference): referenceHeld.
            case .writeAttempt: """
                INSERT INTO attempt (id, session_id, provider_id, status, due_at, provider_reference) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, provider_reference = excluded.provider_reference
                WHERE attempt.status IS NOT excluded.status OR attempt.due_at IS NOT excluded.due_at
                   OR attempt.provider_reference IS NOT excluded.provider_reference
                """
            case .nextEventNumber: "SELECT coalesce(max(number), 0) + 1 FROM event WHERE session_id = ?"
            case .insertEvent: """
                INSERT INTO event (session_id, at, type, attempt_id, status, provider_id, amount, currency, detail, number)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            case .countEvents: "UPDATE session SET events = ? WHERE id = ?"
            // A key is written when it is new, or filled in when an intent
            // bound it to this same request and it has no answer yet.
            case .writeKey: """
                INSERT INTO idempotency (key, fingerprint, body, reference, created_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET body = excluded.body, reference = excluded.reference
                WHERE idempotency.body IS NULL AND idempotency.fingerprint = excluded.fingerprint
                """
            case .insertWebhook: "INSERT INTO webhook (provider_id, event_id, received_at) VALUES (?, ?, ?)"
            }
        }
    }

    /// Writes the change with `statements`, inside the batch's transaction.
    /// Throws a ``StoreConflict`` having written nothing, or ``Partial``.
    func write(_ statements: StatementSet<Statement>) throws -> [SessionEvent] {
        // Conflicts first, before anything is written.
        if let webhook, try statements.run(.webhookSeen, webhook.provider, webhook.eventID, then: { try $0.step() }) {
            throw StoreConflict.duplicateWebhook(provider: webhook.provider, eventID: webhook.eventID)
        }
        // The number of the session's last event once this change is written.
        var lastEvent: Int64?
        if let session {
            let version = session.readVersion + 1
            if session.readVersion == 0 {
                do {
                    // A failed statement undoes itself: nothing is written.
                    try statements.execute(
                        .insertSession, session.id, session.status, version, session.amount, session.currency, session.orderID,
                        session.createdAt, session.updatedAt, session.expiresAt, session.document, session.events)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    throw StoreConflict.staleSession(id: session.id, expected: 0)
                }
                lastEvent = Int64(session.events)
            } else {
                lastEvent = try statements.run(
                    .updateSession, session.status, version, session.amount, session.currency, session.orderID,
                    session.createdAt, session.updatedAt, session.expiresAt, session.document, session.events,
                    session.id, session.readVersion
                ) { statement in
                    guard try statement.step() else { return nil }
                    let count = statement.int64(0)
                    try statement.execute()
                    return count
                }
                guard lastEvent != nil else { throw StoreConflict.staleSession(id: session.id, expected: session.readVersion) }
            }
        }
        do {
            return try writeRest(statements, lastEvent: lastEvent)
        } catch {
            throw Partial(underlying: error)
        }
    }

    private func writeRest(_ statements: StatementSet<Statement>, lastEvent: Int64?) throws -> [SessionEvent] {
        if let session {
            for attempt in attempts {
                do {
                    try statements.execute(.writeAttempt, attempt.id, session.id, attempt.providerID, attempt.status, attempt.due, attempt.providerReference)
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                    throw StoreConflict.referenceHeld(provider: attempt.providerID, reference: attempt.providerReference ?? "")
                }
            }
        }
        // Each event takes the next number of its session, inside the
        // transaction of the single writer, so no other commit can take it:
        // the session's own from the count its row now holds; any other
        // session's (the engine commits none) from its last recorded event,
        // its row's count following.
        var stored = events
        var next: [String: Int64] = [:]
        if let session, let lastEvent { next[session.id] = lastEvent - Int64(session.events) + 1 }
        for index in stored.indices {
            let event = stored[index]
            let number: Int64
            if let known = next[event.sessionID] {
                number = known
            } else {
                number = try statements.run(.nextEventNumber, event.sessionID) { try $0.step() ? $0.int64(0) : 1 }
            }
            try statements.execute(
                .insertEvent, event.sessionID, event.at.timeIntervalSince1970, event.type.rawValue, event.attemptID, event.status,
                event.providerID, event.amount?.value, event.amount?.currency, event.detail, number)
            stored[index].sequence = number
            next[event.sessionID] = number + 1
        }
        for (id, following) in next where id != session?.id {
            try statements.execute(.countEvents, following - 1, id)
        }
        if let answer {
            // Else it was bound to another request, by another host (the engine checked first).
            let written = try statements.execute(
                .writeKey, answer.key, answer.fingerprint, answer.body, answer.reference.map(StoredText.storable), answer.createdAt.timeIntervalSince1970)
            guard written == 1 else { throw StoreConflict.duplicateKey(answer.key) }
        }
        if let webhook {
            try statements.execute(.insertWebhook, webhook.provider, webhook.eventID, webhook.receivedAt)
        }
        return stored
    }
}

/// Group commit: changes submitted while a transaction is being written wait
/// and are written together in the next transaction. Every submitter is
/// answered only after its transaction commits.
///
/// A batch is written without savepoints: a refused change has written
/// nothing (``PreparedChange``). If a change fails part-way, which takes an
/// error from SQLite itself, the transaction is rolled back and the batch
/// written again with each change in a savepoint, so that only that change is
/// undone.
final class CommitBatcher: Sendable {
    private struct Pending {
        var change: PreparedChange
        var continuation: CheckedContinuation<[SessionEvent], Error>
    }

    private struct State {
        var queue: [Pending] = []
        var draining = false
    }

    private let writer: any DatabaseWriter
    private let state = Mutex(State())
    /// The largest batch a transaction takes.
    private let maxBatch = 512

    /// The change statements, on the writer's connection. Used only inside
    /// `writer.writeWithoutTransaction`, which runs one block at a time, and
    /// only by the one drain under way.
    nonisolated(unsafe) private var statements: StatementSet<PreparedChange.Statement>?

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// The change statements for `db`, the writer's connection (prepared there
    /// on first use; GRDB keeps one writer connection for the database's life).
    private func statements(for db: Database) throws -> StatementSet<PreparedChange.Statement> {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the writer's connection is closed") }
        if let statements, statements.connection == connection { return statements }
        let made = StatementSet<PreparedChange.Statement>(borrowing: connection)
        statements = made
        return made
    }

    func submit(_ change: PreparedChange) async throws -> [SessionEvent] {
        try await withCheckedThrowingContinuation { continuation in
            let startDrain = state.withLock { state -> Bool in
                state.queue.append(Pending(change: change, continuation: continuation))
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startDrain {
                Task { await self.drain() }
            }
        }
    }

    /// Writes `changes` in one transaction (BEGIN and COMMIT as cached
    /// statements: GRDB's `write` compiles them every time). Without
    /// savepoints, returns nil, having rolled back, if a change failed after
    /// writing part of itself.
    private func transaction(_ changes: [PreparedChange], _ db: Database, savepoints: Bool) throws -> [Result<[SessionEvent], Error>]? {
        let statements = try statements(for: db)
        try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        do {
            var results: [Result<[SessionEvent], Error>] = []
            results.reserveCapacity(changes.count)
            for change in changes {
                if savepoints {
                    try db.cachedStatement(sql: "SAVEPOINT change").execute()
                }
                do {
                    results.append(.success(try change.write(statements)))
                } catch let conflict as StoreConflict {
                    results.append(.failure(conflict))
                } catch let partial as PreparedChange.Partial {
                    guard savepoints else {
                        try db.cachedStatement(sql: "ROLLBACK").execute()
                        return nil
                    }
                    try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT change").execute()
                    results.append(.failure(partial.underlying))
                }
                if savepoints {
                    try db.cachedStatement(sql: "RELEASE SAVEPOINT change").execute()
                }
            }
            try db.cachedStatement(sql: "COMMIT").execute()
            return results
        } catch {
            if db.isInsideTransaction { try? db.cachedStatement(sql: "ROLLBACK").execute() }
            throw error
        }
    }

    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Pending] in
                let taken = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(taken.count)
                if taken.isEmpty { state.draining = false }
                return taken
            }
            if batch.isEmpty { return }
            let changes = batch.map(\.change)
            let results: [Result<[SessionEvent], Error>]
            do {
                results = try await writer.writeWithoutTransaction { db in
                    // Almost always no change fails part-way, and the batch is
                    // written without savepoints. If one does, the transaction
                    // is rolled back and the batch written again, each change in
                    // a savepoint that undoes it alone.
                    try self.transaction(changes, db, savepoints: false) ?? self.transaction(changes, db, savepoints: true)!
                }
            } catch {
                // The transaction itself failed (disk full, I/O error): nothing
                // of this batch was written, and every submitter is told.
                for pending in batch { pending.continuation.resume(throwing: error) }
                continue
            }
            for (pending, result) in zip(batch, results) { pending.continuation.resume(with: result) }
        }
    }
}

enum EventRow {
    static func event(from row: Row) -> SessionEvent {
        var event = SessionEvent(
            sessionID: row["session_id"], at: Date(timeIntervalSince1970: row["at"]), type: SessionEvent.Kind(rawValue: row["type"]),
            attemptID: row["attempt_id"], status: row["status"], providerID: row["provider_id"],
            amount: (row["amount"] as Int64?).flatMap { value in (row["currency"] as String?).map { Money(value: value, currency: $0) } },
            detail: row["detail"])
        event.sequence = row["number"]
        return event
    }
}
