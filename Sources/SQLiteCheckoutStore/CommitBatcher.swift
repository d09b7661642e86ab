import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
import Synchronization

/// A change made ready for writing (encoded outside the write transaction).
struct PreparedChange: Sendable {
    var change: StoreChange
    var document: Data?

    init(_ change: StoreChange) throws {
        self.change = change
        self.document = try change.session.map { session in
            var next = session
            next.version += 1
            return try DocumentCoding.encoder.encode(next)
        }
    }

    /// Writes the change in `db` (inside a savepoint of the batch's transaction).
    func write(_ db: Database) throws -> [SessionEvent] {
        if let session = change.session, let document {
            try write(session, document: document, db)
        }
        var stored: [SessionEvent] = []
        for var event in change.events {
            try db.execute(sql: """
                INSERT INTO event (session_id, at, type, attempt_id, status, provider_id, amount, currency, detail)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [event.sessionID, event.at.timeIntervalSince1970, event.type, event.attemptID, event.status,
                                 event.providerID, event.amount?.value, event.amount?.currency, event.detail])
            event.sequence = db.lastInsertedRowID
            stored.append(event)
        }
        if let answer = change.answer {
            do {
                try db.execute(sql: "INSERT INTO idempotency (key, fingerprint, body, created_at) VALUES (?, ?, ?, ?)",
                               arguments: [answer.key, answer.fingerprint, answer.body, answer.createdAt.timeIntervalSince1970])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreConflict.duplicateKey(answer.key)
            }
        }
        if let webhook = change.webhook {
            do {
                try db.execute(sql: "INSERT INTO webhook (provider_id, event_id, received_at) VALUES (?, ?, ?)",
                               arguments: [webhook.provider, webhook.eventID, Date().timeIntervalSince1970])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreConflict.duplicateWebhook(provider: webhook.provider, eventID: webhook.eventID)
            }
        }
        return stored
    }

    private func write(_ session: Session, document: Data, _ db: Database) throws {
        let arguments: StatementArguments = [
            session.status.rawValue, session.version + 1, session.amount.value, session.amount.currency, session.orderID,
            session.createdAt.timeIntervalSince1970, session.updatedAt.timeIntervalSince1970,
            session.expiresAt.timeIntervalSince1970, document, session.id,
        ]
        if session.version == 0 {
            do {
                try db.execute(sql: """
                    INSERT INTO session (status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: arguments)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreConflict.staleSession(id: session.id, expected: 0)
            }
        } else {
            try db.execute(sql: """
                UPDATE session SET status = ?, version = ?, amount = ?, currency = ?, order_id = ?, created_at = ?,
                    updated_at = ?, expires_at = ?, document = ?
                WHERE id = ? AND version = ?
                """, arguments: arguments + [session.version])
            guard db.changesCount == 1 else { throw StoreConflict.staleSession(id: session.id, expected: session.version) }
        }
        for attempt in session.attempts {
            let due: Double? = switch attempt.status {
            case .processing: attempt.leaseUntil?.timeIntervalSince1970 ?? 0
            case .pending: attempt.nextCheckAt?.timeIntervalSince1970 ?? 0
            default: nil
            }
            try db.execute(sql: """
                INSERT INTO attempt (id, session_id, provider_id, status, due_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at
                WHERE attempt.status IS NOT excluded.status OR attempt.due_at IS NOT excluded.due_at
                """, arguments: [attempt.id, session.id, attempt.providerID, attempt.status.rawValue, due])
        }
    }
}

/// Group commit: changes submitted while a transaction is being written wait
/// and are written together in the next transaction, each in its own
/// savepoint. Every submitter is answered only after its transaction commits.
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
                results = try await writer.write { db in
                    var results: [Result<[SessionEvent], Error>] = []
                    results.reserveCapacity(changes.count)
                    for change in changes {
                        var outcome: Result<[SessionEvent], Error> = .success([])
                        do {
                            try db.inSavepoint {
                                outcome = .success(try change.write(db))
                                return .commit
                            }
                        } catch {
                            outcome = .failure(error)
                        }
                        results.append(outcome)
                    }
                    return results
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
        event.sequence = row["sequence"]
        return event
    }
}
