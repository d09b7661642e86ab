import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PostgresNIO

/// A change made ready for writing (its document and its attempts' and
/// events' rows encoded before any connection is taken), then written by
/// one call of `gateway_commit` (``SQL/Commit``): one round trip, one
/// transaction.
///
/// A conflict is found by the statement that would write: the webhook's
/// insert, the session's insert or version-checked update, the key's upsert
/// each match no row when another commit (on this host or another) got
/// there first, and the function raises its own SQLSTATE, which undoes the
/// whole statement: nothing is half-written. It comes back here as the
/// ``StoreConflict`` it means.
struct PostgresChange: Sendable {
    private let session: StoreRows.SessionRow?
    private let attempts: String
    private let events: [SessionEvent]
    private let eventRows: String
    private let answer: IdempotentAnswer?
    private let webhook: (provider: String, eventID: String, receivedAt: Double)?

    init(_ change: StoreChange) {
        let rows = StoreRows(change)
        session = rows.session
        var writer = JSONWriter(capacity: 64 * rows.attempts.count + 2)
        writer.beginArray()
        for attempt in rows.attempts {
            writer.beginArray()
            writer.string(attempt.id)
            writer.string(attempt.providerID)
            writer.string(attempt.status)
            if let due = attempt.due { writer.double(due) } else { writer.null() }
            writer.endArray()
        }
        writer.endArray()
        attempts = String(decoding: writer.bytes, as: UTF8.self)
        events = change.events
        writer = JSONWriter(capacity: 160 * change.events.count + 2)
        writer.beginArray()
        for event in change.events {
            writer.beginArray()
            writer.string(event.sessionID)
            writer.double(event.at.timeIntervalSince1970)
            writer.string(event.type)
            for text in [event.attemptID, event.status, event.providerID] {
                if let text { writer.string(text) } else { writer.null() }
            }
            if let amount = event.amount {
                writer.integer(amount.value)
                writer.string(amount.currency)
            } else {
                writer.null()
                writer.null()
            }
            if let detail = event.detail { writer.string(detail) } else { writer.null() }
            writer.endArray()
        }
        writer.endArray()
        eventRows = String(decoding: writer.bytes, as: UTF8.self)
        answer = change.answer
        webhook = change.webhook.map { ($0.provider, $0.eventID, Date().timeIntervalSince1970) }
    }

    /// Writes the change; returns its events with their numbers.
    func write(_ connection: PostgresConnection, logger: Logger) async throws -> [SessionEvent] {
        let row: PostgresRow?
        do {
            row = try await connection.rows(
                SQL.Commit.self,
                .text(session?.id), .text(session?.status), .int(session.map { Int64($0.readVersion) }), .int(session?.amount),
                .text(session?.currency), .text(session?.orderID), .float(session?.createdAt), .float(session?.updatedAt),
                .float(session?.expiresAt), .bytes(session?.document), .int(session.map { Int64($0.events) }),
                .text(attempts), .text(eventRows),
                .text(answer?.key), .text(answer?.fingerprint), .bytes(answer?.body), .text(answer?.reference),
                .float(answer?.createdAt.timeIntervalSince1970),
                .text(webhook?.provider), .text(webhook?.eventID), .float(webhook?.receivedAt),
                logger: logger).first
        } catch let error as PSQLError {
            switch error.serverInfo?[.sqlState] {
            case "GWSTL": throw StoreConflict.staleSession(id: session?.id ?? "", expected: session?.readVersion ?? 0)
            case "GWKEY": throw StoreConflict.duplicateKey(answer?.key ?? "")
            case "GWWHK": throw StoreConflict.duplicateWebhook(provider: webhook?.provider ?? "", eventID: webhook?.eventID ?? "")
            default: throw error
            }
        }
        guard let row else { throw StoredDataError(description: "gateway_commit answered no row") }
        let numbers = try row.decode([Int64].self)
        guard numbers.count == events.count else {
            throw StoredDataError(description: "gateway_commit numbered \(numbers.count) events of \(events.count)")
        }
        var stored = events
        for index in stored.indices { stored[index].sequence = numbers[index] }
        return stored
    }
}
