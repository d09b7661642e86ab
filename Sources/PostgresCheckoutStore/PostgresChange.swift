import CheckoutEngine
import Foundation
import Logging
import PostgresNIO

/// A change made ready for writing (its document encoded before any
/// connection is taken), then written in one transaction.
///
/// A conflict is found by the statement that would write: the webhook's
/// insert, the session's insert or version-checked update, the key's upsert
/// each answer no row when another commit (on this host or another) got
/// there first, and the change throws a ``StoreConflict``, which rolls the
/// whole transaction back: nothing is half-written.
struct PostgresChange: Sendable {
    private let session: StoreRows.SessionRow?
    private let attempts: [StoreRows.AttemptRow]
    private let events: [SessionEvent]
    private let answer: IdempotentAnswer?
    private let webhook: (provider: String, eventID: String, receivedAt: Double)?

    init(_ change: StoreChange) {
        let rows = StoreRows(change)
        session = rows.session
        attempts = rows.attempts
        events = change.events
        answer = change.answer
        webhook = change.webhook.map { ($0.provider, $0.eventID, Date().timeIntervalSince1970) }
    }

    /// Writes the change inside the caller's transaction; returns its events
    /// with their numbers.
    func write(_ connection: PostgresConnection, logger: Logger) async throws -> [SessionEvent] {
        if let webhook {
            let inserted = try await connection.rows(
                SQL.InsertWebhook.self, .text(webhook.provider), .text(webhook.eventID), .float(webhook.receivedAt), logger: logger)
            guard !inserted.isEmpty else { throw StoreConflict.duplicateWebhook(provider: webhook.provider, eventID: webhook.eventID) }
        }
        // The number of each session's last event once this change is written.
        var last: [String: Int64] = [:]
        if let session {
            let row: PostgresRow?
            if session.readVersion == 0 {
                row = try await connection.rows(
                    SQL.InsertSession.self, .text(session.id), .text(session.status), .int(session.amount), .text(session.currency),
                    .text(session.orderID), .float(session.createdAt), .float(session.updatedAt), .float(session.expiresAt),
                    .bytes(session.document), .int(Int64(session.events)), logger: logger).first
            } else {
                row = try await connection.rows(
                    SQL.UpdateSession.self, .text(session.id), .text(session.status), .int(Int64(session.readVersion)), .int(session.amount),
                    .text(session.currency), .text(session.orderID), .float(session.createdAt), .float(session.updatedAt),
                    .float(session.expiresAt), .bytes(session.document), .int(Int64(session.events)), logger: logger).first
            }
            guard let row else { throw StoreConflict.staleSession(id: session.id, expected: session.readVersion) }
            last[session.id] = try row.decode(Int64.self)
            for attempt in attempts {
                _ = try await connection.rows(
                    SQL.WriteAttempt.self, .text(attempt.id), .text(session.id), .text(attempt.providerID), .text(attempt.status),
                    .float(attempt.due), logger: logger)
            }
        }
        // Events of other sessions (never the engine's): each such session's
        // count is taken first, under its row's lock (or its counter's).
        var others: [String: Int64] = [:]
        for event in events where event.sessionID != session?.id { others[event.sessionID, default: 0] += 1 }
        for (id, count) in others.sorted(by: { $0.key < $1.key }) {
            var row = try await connection.rows(SQL.CountOtherEvents.self, .text(id), .int(count), logger: logger).first
            if row == nil {
                row = try await connection.rows(SQL.CountRowlessEvents.self, .text(id), .int(count), logger: logger).first
            }
            guard let row else { throw StoredDataError(description: "no event count for session \(id)") }
            last[id] = try row.decode(Int64.self)
        }
        // Numbered from each session's count, in the change's order.
        var next: [String: Int64] = [:]
        for (id, count) in last {
            next[id] = count - (id == session?.id ? Int64(session!.events) : others[id] ?? 0) + 1
        }
        var stored = events
        for index in stored.indices {
            let event = stored[index]
            guard let number = next[event.sessionID] else { continue }
            _ = try await connection.rows(
                SQL.InsertEvent.self, .text(event.sessionID), .int(number), .float(event.at.timeIntervalSince1970), .text(event.type),
                .text(event.attemptID), .text(event.status), .text(event.providerID), .int(event.amount?.value),
                .text(event.amount?.currency), .text(event.detail), logger: logger)
            stored[index].sequence = number
            next[event.sessionID] = number + 1
        }
        if let answer {
            let written = try await connection.rows(
                SQL.WriteKey.self, .text(answer.key), .text(answer.fingerprint), .bytes(answer.body), .text(answer.reference),
                .float(answer.createdAt.timeIntervalSince1970), logger: logger)
            // Bound to another request (by another host: the engine checked first).
            guard !written.isEmpty else { throw StoreConflict.duplicateKey(answer.key) }
        }
        return stored
    }
}
