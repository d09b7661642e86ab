import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PostgresNIO

/// A change made ready for writing (its scalars, attempts and events as one
/// JSON array, its document and answer body as bytes) before any connection
/// is taken, then written with the changes gathered with it by one call of
/// `gateway_commit_many` (``SQL/CommitMany``): one round trip, one
/// transaction for them all, and (migration v6) one statement for each
/// table unless one of them is refused.
///
/// A conflict is found by the statement that would write: the webhook's
/// insert, the session's insert or version-checked update, the key's upsert
/// each match no row when another commit (on this host or another) got
/// there first, and `gateway_commit` raises its own SQLSTATE, which undoes
/// that change alone (its own subtransaction): nothing of it is
/// half-written, and the others in the batch are written. It comes back
/// here as the ``StoreConflict`` it means.
struct PostgresChange: Sendable {
    /// `[s_id, s_status, s_read_version, s_amount, s_currency, s_order_id,
    /// s_created_at, s_updated_at, s_expires_at, s_events, attempts, events,
    /// k_key, k_fingerprint, k_has_body, k_reference, k_created_at,
    /// w_provider, w_event, w_received_at]`, as migration v5 reads it.
    private let item: [UInt8]
    private let document: ByteBuffer
    private let body: ByteBuffer
    private let events: [SessionEvent]
    let sessionID: String?
    private let readVersion: Int
    private let key: String?
    private let webhook: (provider: String, eventID: String)?
    /// The provider references its attempts hold, for a refusal (GWREF) to name.
    private let references: [(provider: String, reference: String)]

    init(_ change: StoreChange) {
        let rows = StoreRows(change)
        let session = rows.session
        var writer = JSONWriter(capacity: 256 + 64 * rows.attempts.count + 160 * change.events.count)
        writer.beginArray()
        // Every text as PostgreSQL's text can hold it (no U+0000: a provider's
        // reference or notification id may carry one).
        func text(_ value: String?) { if let value { writer.string(StoredText.storable(value)) } else { writer.null() } }
        func number(_ value: Double?) { if let value { writer.double(value) } else { writer.null() } }
        func integer(_ value: Int64?) { if let value { writer.integer(value) } else { writer.null() } }
        text(session?.id)
        text(session?.status)
        integer(session.map { Int64($0.readVersion) })
        integer(session?.amount)
        text(session?.currency)
        text(session?.orderID)
        number(session?.createdAt)
        number(session?.updatedAt)
        number(session?.expiresAt)
        integer(session.map { Int64($0.events) })
        writer.beginArray()
        for attempt in rows.attempts {
            writer.beginArray()
            writer.string(attempt.id)
            writer.string(attempt.providerID)
            writer.string(attempt.status)
            number(attempt.due)
            text(attempt.providerReference)
            writer.endArray()
        }
        writer.endArray()
        writer.beginArray()
        for event in change.events {
            writer.beginArray()
            writer.string(event.sessionID)
            writer.double(event.at.timeIntervalSince1970)
            writer.string(event.type.rawValue)
            text(event.attemptID)
            text(event.status)
            text(event.providerID)
            integer(event.amount?.value)
            text(event.amount?.currency)
            text(event.detail)
            writer.endArray()
        }
        writer.endArray()
        let answer = change.answer
        text(answer?.key)
        text(answer?.fingerprint)
        writer.bool(answer?.body != nil)
        text(answer?.reference)
        number(answer?.createdAt.timeIntervalSince1970)
        text(change.webhook?.provider)
        text(change.webhook?.eventID)
        number(change.webhook.map { _ in Date().timeIntervalSince1970 })
        writer.endArray()
        item = writer.bytes
        document = ByteBuffer(bytes: session?.document ?? Data())
        body = ByteBuffer(bytes: answer?.body ?? Data())
        events = change.events
        sessionID = session?.id
        readVersion = session?.readVersion ?? 0
        key = answer?.key
        webhook = change.webhook
        references = rows.attempts.compactMap { attempt in attempt.providerReference.map { (attempt.providerID, $0) } }
    }

    /// Writes `changes` in one transaction; answers each one's events with
    /// their numbers, or the conflict that refused it (having written
    /// nothing of it). Throws when the batch as a whole failed (nothing of
    /// it is written then, or, the connection lost, the outcome is unknown).
    static func write(_ changes: [PostgresChange], _ connection: PostgresConnection, logger: Logger) async throws -> [Result<[SessionEvent], any Error>] {
        var items: [UInt8] = [UInt8(ascii: "[")]
        items.reserveCapacity(changes.reduce(2) { $0 + $1.item.count + 1 })
        for (index, change) in changes.enumerated() {
            if index > 0 { items.append(UInt8(ascii: ",")) }
            items.append(contentsOf: change.item)
        }
        items.append(UInt8(ascii: "]"))
        // In a transaction of its own, ended by a COMMIT whose answer is read:
        // a statement's implicit commit fails after its rows came back (a
        // deferred check, a full notification queue), and that failure would
        // reach no caller, who would take a change undone for written.
        // BEGIN goes out with the statement, not awaited first: the
        // connection runs them in order, one round trip fewer to wait for.
        let begun = begin(connection, logger: logger)
        let answers: [(refusal: String?, numbers: [Int64]?)]
        do {
            let rows = try await connection.rows(
                SQL.CommitMany.self, .text(String(decoding: items, as: UTF8.self)),
                .byteArrays(changes.map(\.document)), .byteArrays(changes.map(\.body)), logger: logger)
            do {
                _ = try await begun.get()
            } catch {
                // The statement ran, and BEGIN did not: it may have
                // committed on its own. Never refused whole (whose changes
                // would be written again), nor taken for undone.
                throw BatchOutcomeUnknown(reason: "BEGIN failed (\(PostgresCheckoutStore.reason(error))) while the batch's statement ran")
            }
            // Read, and matched to the changes, before COMMIT: an answer
            // that cannot be is the batch undone, never a batch committed
            // and reported failed.
            answers = try matched(rows, count: changes.count)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        try await connection.query("COMMIT", logger: logger)
        return zip(changes, answers).map { change, answer in change.outcome(refusal: answer.refusal, numbers: answer.numbers) }
    }

    /// BEGIN, sent now; its answer comes later (the EventLoopFuture API
    /// sends at once, where the async one would wait for the answer).
    private static func begin(_ connection: PostgresConnection, logger: Logger) -> EventLoopFuture<PostgresQueryResult> {
        connection.query("BEGIN", logger: logger)
    }

    /// A batch whose outcome cannot be known (written or not): each of its
    /// changes fails with this, and none is written again.
    struct BatchOutcomeUnknown: Error, CustomStringConvertible {
        var reason: String
        var description: String { "the batch's outcome is unknown: \(reason)" }
    }

    /// Each change's row, by the number the function gave it (`item_no`,
    /// from 1, in the order of the changes), whatever order the rows came
    /// in; a row missing, repeated or out of range fails the batch.
    static func matched(_ rows: [PostgresRow], count: Int) throws -> [(refusal: String?, numbers: [Int64]?)] {
        var answers = [(refusal: String?, numbers: [Int64]?)?](repeating: nil, count: count)
        for row in rows {
            let (number, refusal, numbers) = try row.decode((Int32, String?, [Int64]?).self)
            let index = Int(number) - 1
            guard answers.indices.contains(index), answers[index] == nil else {
                throw StoredDataError(description: "gateway_commit_many answered item \(number) (of \(count)) twice or out of range")
            }
            answers[index] = (refusal, numbers)
        }
        guard rows.count == count else {
            throw StoredDataError(description: "gateway_commit_many answered \(rows.count) rows for \(count) changes")
        }
        return answers.map { $0! }
    }

    private func outcome(refusal: String?, numbers: [Int64]?) -> Result<[SessionEvent], any Error> {
        switch refusal {
        case "GWSTL"?: return .failure(StoreConflict.staleSession(id: sessionID ?? "", expected: readVersion))
        case "GWKEY"?: return .failure(StoreConflict.duplicateKey(key ?? ""))
        case "GWWHK"?: return .failure(StoreConflict.duplicateWebhook(provider: webhook?.provider ?? "", eventID: webhook?.eventID ?? ""))
        case "GWREF"?:
            let held = references.first
            return .failure(StoreConflict.referenceHeld(provider: held?.provider ?? "", reference: held?.reference ?? ""))
        case let other?: return .failure(StoredDataError(description: "gateway_commit_many refused a change with \(other)"))
        case nil:
            guard let numbers, numbers.count == events.count else {
                return .failure(StoredDataError(description: "gateway_commit_many numbered \(numbers?.count ?? 0) events of \(events.count)"))
            }
            var stored = events
            for index in stored.indices { stored[index].sequence = numbers[index] }
            return .success(stored)
        }
    }
}
