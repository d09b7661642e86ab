import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
import Synchronization

/// A change made ready for writing: encoded, and its statement arguments
/// built, on the submitter's thread, so that the single writer thread only
/// binds and steps.
///
/// Its usual conflicts (a stale session, a used notification) are found
/// before its first write, so a refused change has written nothing and needs
/// no savepoint. An error after its first write is ``Partial``: that includes
/// an idempotency key bound to another request, which the engine's own check
/// has almost always refused before the change was made (only another host
/// on the same store can race it here), so the one statement that writes a
/// key also checks it.
struct PreparedChange: Sendable {
    private enum SessionWrite: Sendable {
        case insert(StatementArguments)
        case update(StatementArguments, version: Int)
    }

    private let sessionID: String?
    private let sessionWrite: SessionWrite?
    private let attempts: [StatementArguments]
    private let events: [SessionEvent]
    private let eventArguments: [StatementArguments]
    private let answer: (key: String, arguments: StatementArguments)?
    /// How many of the change's events are its session's: the session row
    /// counts them (`events`), and its events are numbered from that count.
    private let sessionEvents: Int
    private let webhook: (provider: String, eventID: String, arguments: StatementArguments)?

    /// A change failed after it had written something: only a savepoint (or
    /// the whole transaction) can undo it.
    struct Partial: Error {
        var underlying: any Error
    }

    init(_ change: StoreChange) throws {
        if let session = change.session {
            var next = session
            next.version += 1
            let document = DocumentCoding.encode(next)
            let counted = change.events.reduce(0) { $0 + ($1.sessionID == session.id ? 1 : 0) }
            let arguments: StatementArguments = [
                session.status.rawValue, session.version + 1, session.amount.value, session.amount.currency, session.orderID,
                session.createdAt.timeIntervalSince1970, session.updatedAt.timeIntervalSince1970,
                session.expiresAt.timeIntervalSince1970, document, counted, session.id,
            ]
            sessionID = session.id
            sessionEvents = counted
            sessionWrite = session.version == 0 ? .insert(arguments) : .update(arguments + [session.version], version: session.version)
            attempts = session.attempts.map { attempt in
                // A payment with an operation held (a capture, refund or void
                // not settled yet) is due when the earliest of them is.
                let due: Double? = switch attempt.status {
                case .processing: attempt.leaseUntil?.timeIntervalSince1970 ?? 0
                case .pending: attempt.nextCheckAt?.timeIntervalSince1970 ?? 0
                default: attempt.balance.flatMap { $0.inFlight.isEmpty ? nil : ($0.nextHeldCheck?.timeIntervalSince1970 ?? 0) }
                }
                return [attempt.id, session.id, attempt.providerID, attempt.status.rawValue, due]
            }
        } else {
            sessionID = nil
            sessionEvents = 0
            sessionWrite = nil
            attempts = []
        }
        events = change.events
        eventArguments = change.events.map { event in
            [event.sessionID, event.at.timeIntervalSince1970, event.type, event.attemptID, event.status,
             event.providerID, event.amount?.value, event.amount?.currency, event.detail]
        }
        answer = change.answer.map { answer in
            (answer.key, [answer.key, answer.fingerprint, answer.body, answer.reference, answer.createdAt.timeIntervalSince1970])
        }
        webhook = change.webhook.map { webhook in
            (webhook.provider, webhook.eventID, [webhook.provider, webhook.eventID, Date().timeIntervalSince1970])
        }
    }

    /// Writes the change in `db`, inside the batch's transaction. Throws a
    /// ``StoreConflict`` having written nothing, or ``Partial``.
    func write(_ db: Database) throws -> [SessionEvent] {
        // Conflicts first, before anything is written.
        if let webhook,
           try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM webhook WHERE provider_id = ? AND event_id = ?"),
                             arguments: [webhook.provider, webhook.eventID]) == true {
            throw StoreConflict.duplicateWebhook(provider: webhook.provider, eventID: webhook.eventID)
        }
        // The number of the session's last event once this change is written.
        var lastEvent: Int64?
        switch sessionWrite {
        case .insert(let arguments):
            do {
                // A failed statement undoes itself: nothing is written.
                try db.cachedStatement(sql: """
                    INSERT INTO session (status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events, id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: arguments)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreConflict.staleSession(id: sessionID!, expected: 0)
            }
            lastEvent = Int64(sessionEvents)
        case .update(let arguments, let version):
            // Writes nothing unless the stored version is the one read.
            lastEvent = try Int64.fetchOne(db.cachedStatement(sql: """
                UPDATE session SET status = ?, version = ?, amount = ?, currency = ?, order_id = ?, created_at = ?,
                    updated_at = ?, expires_at = ?, document = ?, events = events + ?
                WHERE id = ? AND version = ?
                RETURNING events
                """), arguments: arguments)
            guard lastEvent != nil else { throw StoreConflict.staleSession(id: sessionID!, expected: version) }
        case nil:
            break
        }
        do {
            return try writeRest(db, lastEvent: lastEvent)
        } catch {
            throw Partial(underlying: error)
        }
    }

    private func writeRest(_ db: Database, lastEvent: Int64?) throws -> [SessionEvent] {
        for arguments in attempts {
            try db.cachedStatement(sql: """
                INSERT INTO attempt (id, session_id, provider_id, status, due_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at
                WHERE attempt.status IS NOT excluded.status OR attempt.due_at IS NOT excluded.due_at
                """).execute(arguments: arguments)
        }
        // Each event takes the next number of its session, inside the
        // transaction of the single writer, so no other commit can take it:
        // the session's own from the count its row now holds; any other
        // session's (the engine commits none) from its last recorded event,
        // its row's count following.
        var stored = events
        var next: [String: Int64] = [:]
        if let sessionID, let lastEvent { next[sessionID] = lastEvent - Int64(sessionEvents) + 1 }
        for index in stored.indices {
            let session = stored[index].sessionID
            let number: Int64
            if let known = next[session] {
                number = known
            } else {
                number = try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(number), 0) + 1 FROM event WHERE session_id = ?"),
                                            arguments: [session]) ?? 1
            }
            try db.cachedStatement(sql: """
                INSERT INTO event (session_id, at, type, attempt_id, status, provider_id, amount, currency, detail, number)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: eventArguments[index] + [number])
            stored[index].sequence = number
            next[session] = number + 1
        }
        for (session, following) in next where session != sessionID {
            try db.cachedStatement(sql: "UPDATE session SET events = ? WHERE id = ?").execute(arguments: [following - 1, session])
        }
        if let answer { try writeKey(db, answer) }
        if let webhook {
            try db.cachedStatement(sql: "INSERT INTO webhook (provider_id, event_id, received_at) VALUES (?, ?, ?)")
                .execute(arguments: webhook.arguments)
        }
        return stored
    }

    /// A key is written when it is new, or filled in when an intent bound it
    /// to this same request and it has no answer yet; else it was bound to
    /// another request, by another host (the engine checked first).
    private func writeKey(_ db: Database, _ answer: (key: String, arguments: StatementArguments)) throws {
        try db.cachedStatement(sql: """
            INSERT INTO idempotency (key, fingerprint, body, reference, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET body = excluded.body, reference = excluded.reference
            WHERE idempotency.body IS NULL AND idempotency.fingerprint = excluded.fingerprint
            """).execute(arguments: answer.arguments)
        guard db.changesCount == 1 else { throw StoreConflict.duplicateKey(answer.key) }
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

    init(writer: any DatabaseWriter) {
        self.writer = writer
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
    private static func transaction(_ changes: [PreparedChange], _ db: Database, savepoints: Bool) throws -> [Result<[SessionEvent], Error>]? {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        do {
            var results: [Result<[SessionEvent], Error>] = []
            results.reserveCapacity(changes.count)
            for change in changes {
                if savepoints {
                    try db.cachedStatement(sql: "SAVEPOINT change").execute()
                }
                do {
                    results.append(.success(try change.write(db)))
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
                    try Self.transaction(changes, db, savepoints: false) ?? Self.transaction(changes, db, savepoints: true)!
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
            sessionID: row["session_id"], at: Date(timeIntervalSince1970: row["at"]), type: row["type"],
            attemptID: row["attempt_id"], status: row["status"], providerID: row["provider_id"],
            amount: (row["amount"] as Int64?).flatMap { value in (row["currency"] as String?).map { Money(value: value, currency: $0) } },
            detail: row["detail"])
        event.sequence = row["number"]
        return event
    }
}
