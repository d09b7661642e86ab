import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PostgresNIO

/// Merchants' webhook endpoints and deliveries (``WebhookStore``), beside
/// the event log they are made from (migrations v8 and v9).
///
/// - The feed never skips. Several hosts commit at once, so `event.id` is no
///   commit order: a transaction that took a lower id may commit after one
///   that took a higher. Each event records its transaction's id (`tx`,
///   `xid8`, never reused), and the feed goes by `(tx, id)` but stops below
///   the oldest transaction still running (`pg_snapshot_xmin` of the read's
///   snapshot): every transaction below it has ended, and one that commits
///   later was running or had no id yet, so its id is at or above it. Every
///   cursor handed out is below it too, so an event that becomes readable
///   later sorts after every cursor already handed out. The cost: any long
///   writing transaction on the server (a migration, an `ANALYZE`) holds
///   the feed back until it ends; nothing is lost.
/// - Each write is one statement (its own transaction). An endpoint's
///   fan-out is leased on its row (`fanout_by` until `fanout_until`), so one
///   host at a time sends its events at once; an advance moves its cursor
///   only if it is still where that host read it, and in the same statement
///   counts what was delivered at once and writes the rest as deliveries, or
///   does neither. A claim takes its rows with `FOR UPDATE SKIP LOCKED`, so
///   two hosts claiming at once never both get one delivery.
extension PostgresCheckoutStore: WebhookStore {
    public func feed(after cursor: EventCursor, mode: PaymentMode, types: Set<String>?, limit: Int) async throws -> FeedPage {
        let scanned = try await withConnection { connection, logger in
            try await connection.rows(SQL.EventFeed.self, .text(String(cursor.transaction)), .int(cursor.row), .int(Int64(limit)), logger: logger)
                .map { row -> (EventCursor, String, SessionEvent) in
                    // The event's columns first (``event(from:)``), then its position and its session's mode.
                    let tail = row.makeRandomAccess()
                    let position = try EventCursor(transaction: Self.transactionID(tail[10].decode(String.self)), row: tail[11].decode(Int64.self))
                    return try (position, tail[12].decode(String.self), Self.event(from: row))
                }
        }
        var events: [FeedEvent] = []
        var next = cursor
        for (position, stored, event) in scanned {
            next = position
            guard PaymentMode(rawValue: stored) == mode, types.map({ $0.contains(event.type.rawValue) }) ?? true else { continue }
            events.append(FeedEvent(cursor: position, mode: mode, event: event))
        }
        return FeedPage(events: events, next: next, more: scanned.count == limit)
    }

    public func createWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws {
        try await withConnection { connection, logger in
            _ = try await connection.rows(SQL.InsertWebhookEndpoint.self, Self.endpointValues(endpoint), logger: logger)
        }
    }

    public func webhookEndpoints() async throws -> [WebhookEndpointRecord] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.WebhookEndpoints.self, logger: logger).map(Self.endpointRecord(from:))
        }
    }

    public func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord? {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.WebhookEndpointByID.self, .text(id), logger: logger).first.map(Self.endpointRecord(from:))
        }
    }

    public func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord, from previous: WebhookEndpointRecord, at now: Date) async throws -> Bool {
        let updated = try await withConnection { connection, logger in
            try await connection.rows(SQL.UpdateWebhookEndpoint.self, Self.endpointValues(endpoint) + [
                .float(now.timeIntervalSince1970), .bytes(previous.secret), .text(previous.state.rawValue),
                .float(previous.removedAt?.timeIntervalSince1970),
            ], logger: logger).first?.decode(Int64.self)
        }
        return updated == 1
    }

    public func leaseFanOut(endpoint: String, claimant: String, at now: Date, until: Date) async throws -> Bool {
        let leased = try await withConnection { connection, logger in
            try await connection.rows(
                SQL.LeaseFanOut.self, .text(endpoint), .text(claimant), .float(until.timeIntervalSince1970), .float(now.timeIntervalSince1970),
                logger: logger
            ).first?.decode(Int64.self)
        }
        return leased == 1
    }

    public func releaseFanOut(claimant: String) async throws {
        try await withConnection { connection, logger in
            _ = try await connection.rows(SQL.ReleaseFanOut.self, .text(claimant), logger: logger)
        }
    }

    public func pendingSessions(endpoint: String, among sessions: [String]) async throws -> Set<String> {
        guard !sessions.isEmpty else { return [] }
        let pending = try await withConnection { connection, logger in
            try await connection.rows(SQL.PendingSessions.self, .text(endpoint), .texts(sessions), logger: logger).map { try $0.decode(String.self) }
        }
        return Set(pending)
    }

    public func advance(endpoint: String, from: EventCursor, to: EventCursor, _ sent: SentStretch, claimant: String, until: Date) async throws -> Bool {
        let rows = sent.queue + sent.inFlight
        // A delivery with no failing time or no error (none failed yet): 0
        // or "" stands in, unread (its flag is false).
        let values: [Bound] = [
            .text(endpoint), .text(String(from.transaction)), .int(from.row), .text(String(to.transaction)), .int(to.row),
            .int(Int64(sent.delivered)), .float(sent.lastDelivered?.timeIntervalSince1970),
            .texts(rows.map(\.endpointID)), .texts(rows.map(\.sessionID)), .texts(rows.map { String($0.cursor.transaction) }),
            .texts(rows.map(\.type)), .texts(rows.map { $0.lastError ?? "" }), .byteArrays(rows.map { ByteBuffer(bytes: $0.body) }),
            .text(claimant), .float(until.timeIntervalSince1970),
        ]
        let arrays: [BoundArray] = [
            .int8(rows.map(\.number)), .int8(rows.map(\.cursor.row)), .int8(rows.map { Int64($0.tries) }),
            .float8(rows.map(\.queuedAt.timeIntervalSince1970)), .float8(rows.map(\.dueAt.timeIntervalSince1970)),
            .float8(rows.map { $0.failingSince?.timeIntervalSince1970 ?? 0 }), .bool(rows.map { $0.failingSince != nil }),
            .bool(rows.map { $0.lastError != nil }),
            .bool(Array(repeating: false, count: sent.queue.count) + Array(repeating: true, count: sent.inFlight.count)),
        ]
        let moved = try await withConnection { connection, logger in
            try await connection.rows(SQL.AdvanceFanOut.self, values, arrays: arrays, logger: logger).first?.decode(Int64.self)
        }
        return moved == 1
    }

    public func claimDeliveries(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [WebhookDelivery] {
        let claimed = try await withConnection { connection, logger in
            try await connection.rows(
                SQL.ClaimDeliveries.self, .float(now.timeIntervalSince1970), .int(Int64(limit)), .text(claimant),
                .float(until.timeIntervalSince1970), logger: logger
            ).map(Self.delivery(from:))
        }
        // UPDATE … RETURNING answers in no particular order: the claim's own.
        return claimed.sorted { ($0.dueAt, $0.cursor) < ($1.dueAt, $1.cursor) }
    }

    public func recordDeliveries(_ outcomes: [DeliveryOutcome], claimant: String) async throws -> Int {
        guard !outcomes.isEmpty else { return 0 }
        // A delivered one has no reason and no retry time: "" and its own
        // time stand in, unread (`failed` is false).
        let values: [Bound] = [
            .text(claimant), .texts(outcomes.map(\.endpointID)), .texts(outcomes.map(\.sessionID)),
            .texts(outcomes.map { $0.failure?.reason ?? "" }),
        ]
        let arrays: [BoundArray] = [
            .int8(outcomes.map(\.number)), .float8(outcomes.map(\.at.timeIntervalSince1970)), .bool(outcomes.map { $0.failure != nil }),
            .float8(outcomes.map { ($0.failure?.retryAt ?? $0.at).timeIntervalSince1970 }), .bool(outcomes.map { $0.failure?.giveUp == true }),
        ]
        let recorded = try await withConnection { connection, logger in
            try await connection.rows(SQL.RecordDeliveries.self, values, arrays: arrays, logger: logger).first?.decode(Int64.self)
        }
        return Int(recorded ?? 0)
    }

    public func requeueDeliveries(_ deliveries: [WebhookDelivery], at now: Date) async throws -> Int {
        guard !deliveries.isEmpty else { return 0 }
        let values: [Bound] = [
            .float(now.timeIntervalSince1970), .texts(deliveries.map(\.endpointID)), .texts(deliveries.map(\.sessionID)),
            .texts(deliveries.map { String($0.cursor.transaction) }), .texts(deliveries.map(\.type)),
            .byteArrays(deliveries.map { ByteBuffer(bytes: $0.body) }),
        ]
        let arrays: [BoundArray] = [
            .int8(deliveries.map(\.number)), .int8(deliveries.map(\.cursor.row)), .float8(deliveries.map(\.queuedAt.timeIntervalSince1970)),
        ]
        let requeued = try await withConnection { connection, logger in
            try await connection.rows(SQL.RequeueDeliveries.self, values, arrays: arrays, logger: logger).first?.decode(Int64.self)
        }
        return Int(requeued ?? 0)
    }

    public func deliveryCounts(endpoint: String) async throws -> DeliveryCounts {
        try await withConnection { connection, logger in
            guard let row = try await connection.rows(SQL.CountDeliveries.self, .text(endpoint), logger: logger).first else {
                return DeliveryCounts(delivered: 0, pending: 0, retrying: 0, oldestUndelivered: nil)
            }
            let (delivered, pending, retrying, abandoned, oldest, last) = try row.decode((Int64, Int64, Int64, Int64, Double?, Double?).self)
            return DeliveryCounts(delivered: Int(delivered), pending: Int(pending), retrying: Int(retrying), abandoned: Int(abandoned),
                                  oldestUndelivered: oldest.map(Date.init(timeIntervalSince1970:)),
                                  lastDelivered: last.map(Date.init(timeIntervalSince1970:)))
        }
    }

    public func agreeOnSealingKey(check: String) async throws -> String? {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.AgreeOnKeyCheck.self, .text(check), .text("webhook_sealing_key"), logger: logger).first?.decode(String.self)
        }
    }

    public func pruneDeliveries(before: Date) async throws -> Int {
        let pruned = try await withConnection { connection, logger in
            try await connection.rows(SQL.PruneDeliveries.self, .float(before.timeIntervalSince1970), logger: logger).first?.decode(Int64.self)
        }
        return Int(pruned ?? 0)
    }

    // MARK: Rows

    /// An endpoint's columns in ``SQL/webhookEndpointColumns``' order.
    private static func endpointValues(_ endpoint: WebhookEndpointRecord) -> [Bound] {
        [.text(endpoint.id), .text(endpoint.url), .text(endpoint.mode.rawValue), .text(endpoint.types.map(WebhookTypes.text)),
         .text(endpoint.description), .text(endpoint.signing.rawValue), .bytes(endpoint.secret), .text(endpoint.publicKey),
         .bytes(endpoint.previousSecret), .float(endpoint.previousUntil?.timeIntervalSince1970), .text(endpoint.state.rawValue),
         .text(endpoint.stateReason), .float(endpoint.createdAt.timeIntervalSince1970), .float(endpoint.removedAt?.timeIntervalSince1970)]
    }

    /// A row as an endpoint. The table's checks admit only the known modes,
    /// signings and states; a row with another is an error.
    private static func endpointRecord(from row: PostgresRow) throws -> WebhookEndpointRecord {
        let (id, url, mode, types, description, signing, secret, publicKey, previousSecret, previousUntil, state, stateReason, created, removed) =
            try row.decode((String, String, String, String?, String?, String, Data, String?, Data?, Double?, String, String?, Double, Double?).self)
        let tail = row.makeRandomAccess()
        let (cursorTransaction, cursorRow) = (try tail[14].decode(String.self), try tail[15].decode(Int64.self))
        let (startTransaction, startRow) = (try tail[16].decode(String.self), try tail[17].decode(Int64.self))
        func parsed<T: RawRepresentable<String>>(_ stored: String, _ column: String) throws -> T {
            guard let value = T(rawValue: stored) else {
                throw StoredDataError(description: "webhook endpoint \(id) has no valid \(column) (\(stored.prefix(16)))")
            }
            return value
        }
        return WebhookEndpointRecord(
            id: id, url: url, mode: try parsed(mode, "mode"), types: types.map(WebhookTypes.list), description: description,
            signing: try parsed(signing, "signing"), secret: secret, publicKey: publicKey, previousSecret: previousSecret,
            previousUntil: previousUntil.map(Date.init(timeIntervalSince1970:)), state: try parsed(state, "state"), stateReason: stateReason,
            createdAt: Date(timeIntervalSince1970: created), removedAt: removed.map(Date.init(timeIntervalSince1970:)),
            cursor: EventCursor(transaction: try transactionID(cursorTransaction), row: cursorRow),
            start: EventCursor(transaction: try transactionID(startTransaction), row: startRow))
    }

    /// A row of ``SQL/webhookDeliveryColumns(_:)`` as a delivery.
    private static func delivery(from row: PostgresRow) throws -> WebhookDelivery {
        let (endpoint, session, number, transaction, cursorRow, type, body, stored, tries, queued, due, failingSince, lastError, deliveredAt) =
            try row.decode((String, String, Int64, String, Int64, String, Data, String, Int64, Double, Double, Double?, String?, Double?).self)
        guard let state = WebhookDelivery.State(rawValue: stored) else {
            throw StoredDataError(description: "webhook delivery \(endpoint) \(session) \(number) has no valid state (\(stored.prefix(16)))")
        }
        return WebhookDelivery(
            endpointID: endpoint, sessionID: session, number: number,
            cursor: EventCursor(transaction: try transactionID(transaction), row: cursorRow), type: type, body: body, state: state,
            tries: Int(tries), queuedAt: Date(timeIntervalSince1970: queued), dueAt: Date(timeIntervalSince1970: due),
            failingSince: failingSince.map(Date.init(timeIntervalSince1970:)), lastError: lastError,
            deliveredAt: deliveredAt.map(Date.init(timeIntervalSince1970:)))
    }

    /// A transaction id (`xid8`, read as its text: the driver decodes no
    /// `xid8`, and it is unsigned 64 bits) as the cursor keeps it.
    private static func transactionID(_ text: String) throws -> UInt64 {
        guard let id = UInt64(text) else { throw StoredDataError(description: "transaction id \(text.prefix(24)) is not one") }
        return id
    }
}

/// An array of numbers or flags bound to a webhook statement, after its
/// ``Bound`` values (which bind only arrays of texts and of bytes).
private enum BoundArray {
    case int8([Int64])
    case float8([Double])
    case bool([Bool])
}

extension PostgresConnection {
    /// Runs `Text` with `values`, then `arrays`, and answers its rows.
    fileprivate func rows<Text: StatementText>(_ text: Text.Type, _ values: [Bound], arrays: [BoundArray] = [],
                                                logger: Logger) async throws -> [PostgresRow] {
        var bindings = try Bound.bindings(values)
        for array in arrays {
            switch array {
            case .int8(let numbers): bindings.append(numbers)
            case .float8(let numbers): bindings.append(numbers)
            case .bool(let flags): bindings.append(flags)
            }
        }
        var rows: [PostgresRow] = []
        for try await row in try await execute(Prepared<Text>(bindings: bindings), logger: logger) {
            rows.append(row)
        }
        return rows
    }
}

/// The webhook statements. A cursor's transaction id is bound as text and
/// read as text (`xid8`, unsigned 64 bits, which the driver does not code).
extension SQL {
    static let webhookEndpointColumns = """
        id, url, mode, types, description, signing, secret, public_key, previous_secret, previous_until, state, state_reason, created_at, removed_at
        """

    static func webhookDeliveryColumns(_ table: String) -> String {
        ["endpoint_id", "session_id", "number", "cursor_tx::text", "cursor_row", "type", "body", "state", "tries", "queued_at", "due_at",
         "failing_since", "last_error", "delivered_at"].map { "\(table).\($0)" }.joined(separator: ", ")
    }

    /// Events after a cursor, in the feed's order, up to the oldest
    /// transaction still running (see Webhooks.swift), each with its
    /// position and its session's mode. A session's document with `\u0000`
    /// in it (which jsonb cannot hold) is read with each such escape as
    /// `\u0020`: a change of the same length, within its strings, that keeps
    /// the JSON valid and its members where they were. A session written
    /// before modes is live.
    enum EventFeed: StatementText {
        static let sql = """
            SELECT e.number, e.session_id, e.at, e.type, e.attempt_id, e.status, e.provider_id, e.amount, e.currency, e.detail,
                   e.tx::text, e.id,
                   coalesce(replace(convert_from(s.document, 'UTF8'), '\\u0000', '\\u0020')::jsonb ->> 'mode', 'live')
            FROM event AS e JOIN session AS s ON s.id = e.session_id
            WHERE (e.tx, e.id) > ($1::xid8, $2) AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY e.tx, e.id LIMIT $3
            """
        static let types: [PostgresDataType] = [.text, .int8, .int8]
    }

    /// A new endpoint, its cursor and its start at the feed's end now (one
    /// position, read once). The feed's end is the oldest transaction still
    /// running when the row is written, at row 0: every event of a
    /// transaction that commits after the endpoint does was running then, or
    /// had no id yet, so its id is at or above it and it is delivered; none
    /// is skipped. Events of transactions at or above it that committed just
    /// before may be delivered too (at least once: an endpoint hearing of a
    /// change from just before it existed is harmless). The greatest
    /// `(tx, id)` already readable would not do: a transaction running then,
    /// below it, commits after and is skipped.
    enum InsertWebhookEndpoint: StatementText {
        static let sql = """
            INSERT INTO webhook_endpoint (\(webhookEndpointColumns), cursor_tx, cursor_row, start_tx, start_row)
            SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, f.feed_end, 0, f.feed_end, 0
            FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS feed_end) AS f
            """
        static let types: [PostgresDataType] = [.text, .text, .text, .text, .text, .text, .bytea, .text, .bytea, .float8, .text, .text, .float8, .float8]
    }

    enum WebhookEndpoints: StatementText {
        static let sql = """
            SELECT \(webhookEndpointColumns), cursor_tx::text, cursor_row, start_tx::text, start_row
            FROM webhook_endpoint WHERE removed_at IS NULL ORDER BY created_at, id
            """
        static let types: [PostgresDataType] = []
    }

    enum WebhookEndpointByID: StatementText {
        static let sql = "SELECT \(webhookEndpointColumns), cursor_tx::text, cursor_row, start_tx::text, start_row FROM webhook_endpoint WHERE id = $1"
        static let types: [PostgresDataType] = [.text]
    }

    /// Writes an endpoint (not its cursor, start, counts or fan-out lease)
    /// if it is still as read: its secret `$16`, state `$17` and removal
    /// `$18` (compared under the row's lock, the newest when another write
    /// got there first); an endpoint disabled and now enabled has its
    /// pending deliveries due at `$15`, their tries and failing time
    /// forgotten. Answers 1, or 0 when there is no such endpoint or it
    /// changed.
    enum UpdateWebhookEndpoint: StatementText {
        static let sql = """
            WITH was AS (
                SELECT id, state FROM webhook_endpoint
                WHERE id = $1 AND secret = $16 AND state = $17 AND removed_at IS NOT DISTINCT FROM $18
                FOR NO KEY UPDATE),
            changed AS (
                UPDATE webhook_endpoint AS e SET url = $2, mode = $3, types = $4, description = $5, signing = $6, secret = $7, public_key = $8,
                    previous_secret = $9, previous_until = $10, state = $11, state_reason = $12, created_at = $13, removed_at = $14
                FROM was WHERE e.id = was.id
                RETURNING was.state AS was_state),
            woken AS (
                UPDATE webhook_delivery SET due_at = $15, tries = 0, failing_since = NULL
                WHERE endpoint_id = $1 AND state = 'pending' AND $11 = 'enabled' AND EXISTS (SELECT FROM changed WHERE was_state = 'disabled')
                RETURNING 1)
            SELECT count(*) FROM changed
            """
        static let types: [PostgresDataType] = [.text, .text, .text, .text, .text, .text, .bytea, .text, .bytea, .float8, .text, .text, .float8,
                                                .float8, .float8, .bytea, .text, .float8]
    }

    /// Endpoint `$1`'s fan-out leased to `$2` until `$3` when it is free at
    /// `$4` (never leased, or its lease ended) or already `$2`'s. Answers 1,
    /// or 0 when another holds it (or there is no such endpoint). Two hosts
    /// leasing at once: the second's UPDATE waits for the first's, then
    /// finds the row leased.
    enum LeaseFanOut: StatementText {
        static let sql = """
            WITH leased AS (
                UPDATE webhook_endpoint SET fanout_by = $2, fanout_until = $3
                WHERE id = $1 AND (fanout_by IS NULL OR fanout_by = $2 OR fanout_until <= $4)
                RETURNING 1)
            SELECT count(*) FROM leased
            """
        static let types: [PostgresDataType] = [.text, .text, .float8, .float8]
    }

    /// Ends the fan-out leases `$1` holds.
    enum ReleaseFanOut: StatementText {
        static let sql = "UPDATE webhook_endpoint SET fanout_by = NULL, fanout_until = NULL WHERE fanout_by = $1"
        static let types: [PostgresDataType] = [.text]
    }

    /// Of sessions `$2`, those with a pending delivery to endpoint `$1`.
    enum PendingSessions: StatementText {
        static let sql = """
            SELECT DISTINCT session_id FROM webhook_delivery
            WHERE endpoint_id = $1 AND state = 'pending' AND session_id = ANY($2::text[])
            """
        static let types: [PostgresDataType] = [.text, .textArray]
    }

    /// Moves an endpoint's cursor from `($2, $3)` to `($4, $5)`, adds `$6`
    /// to the events it took at once (the last at `$7`, NULL: none), and
    /// writes the deliveries (`$8`…`$13`, `$16`…`$24`, one array per column;
    /// a failing time or error whose flag is false is NULL) pending, their
    /// tries, due times and failures as given, those flagged claimed (a try
    /// in flight) claimed by `$14` until `$15`; one already written is left
    /// as it is.
    /// Answers 1 when the cursor moved, 0 (nothing written) when it was no
    /// longer `($2, $3)`: another host's advance of the same stretch
    /// committed first (its UPDATE waited for that one's, then found the row
    /// changed).
    enum AdvanceFanOut: StatementText {
        static let sql = """
            WITH moved AS (
                UPDATE webhook_endpoint SET cursor_tx = $4::xid8, cursor_row = $5, delivered_count = delivered_count + $6,
                    last_delivered_at = greatest(last_delivered_at, $7)
                WHERE id = $1 AND cursor_tx = $2::xid8 AND cursor_row = $3
                RETURNING id),
            queued AS (
                INSERT INTO webhook_delivery (endpoint_id, session_id, number, cursor_tx, cursor_row, type, body, state, tries, queued_at, due_at,
                                              failing_since, last_error, claimed_by, claimed_until)
                SELECT d.endpoint_id, d.session_id, d.number, d.feed_tx::xid8, d.feed_row, d.type, d.body, 'pending', d.tries, d.queued_at, d.due_at,
                       CASE WHEN d.failing THEN d.failing_since END, CASE WHEN d.erred THEN d.last_error END,
                       CASE WHEN d.claimed THEN $14 END, CASE WHEN d.claimed THEN $15 END
                FROM unnest($8::text[], $9::text[], $16::int8[], $10::text[], $17::int8[], $11::text[], $13::bytea[], $18::int8[], $19::float8[],
                            $20::float8[], $21::float8[], $22::bool[], $12::text[], $23::bool[], $24::bool[])
                    AS d(endpoint_id, session_id, number, feed_tx, feed_row, type, body, tries, queued_at, due_at, failing_since, failing,
                         last_error, erred, claimed)
                WHERE EXISTS (SELECT FROM moved)
                ON CONFLICT DO NOTHING)
            SELECT count(*) FROM moved
            """
        static let types: [PostgresDataType] = [.text, .text, .int8, .text, .int8, .int8, .float8, .textArray, .textArray, .textArray, .textArray,
                                                .textArray, .byteaArray, .text, .float8, .int8Array, .int8Array, .int8Array, .float8Array,
                                                .float8Array, .float8Array, .boolArray, .boolArray, .boolArray]
    }

    /// Claims for `$3`, until `$4`, up to `$2` deliveries due at `$1`:
    /// pending, lease free, of an enabled endpoint not removed, each the
    /// first pending one of its session for its endpoint. A row another
    /// claim is taking is skipped (`SKIP LOCKED`); one another claim took
    /// after this one's snapshot is checked again once locked (PostgreSQL
    /// re-reads the row it locks), finds its lease held, and is left.
    enum ClaimDeliveries: StatementText {
        static let sql = """
            WITH due AS (
                SELECT d.endpoint_id, d.session_id, d.number FROM webhook_delivery AS d
                JOIN webhook_endpoint AS e ON e.id = d.endpoint_id
                WHERE d.state = 'pending' AND d.due_at <= $1 AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
                  AND e.state = 'enabled' AND e.removed_at IS NULL
                  AND NOT EXISTS (SELECT FROM webhook_delivery AS p
                                  WHERE p.endpoint_id = d.endpoint_id AND p.session_id = d.session_id AND p.number < d.number
                                    AND p.state = 'pending')
                ORDER BY d.due_at, d.cursor_tx, d.cursor_row LIMIT $2
                FOR UPDATE OF d SKIP LOCKED)
            UPDATE webhook_delivery AS d SET claimed_by = $3, claimed_until = $4
            FROM due WHERE d.endpoint_id = due.endpoint_id AND d.session_id = due.session_id AND d.number = due.number
            RETURNING \(webhookDeliveryColumns("d"))
            """
        static let types: [PostgresDataType] = [.float8, .int8, .text, .float8]
    }

    /// What became of deliveries `$1` claimed, one array per field: each
    /// written only while pending and still `$1`'s. Answers how many were.
    enum RecordDeliveries: StatementText {
        static let sql = """
            WITH o AS (
                SELECT * FROM unnest($2::text[], $3::text[], $5::int8[], $6::float8[], $7::bool[], $4::text[], $8::float8[], $9::bool[])
                    AS o(endpoint_id, session_id, number, at, failed, reason, retry_at, given_up)),
            recorded AS (
                UPDATE webhook_delivery AS d SET
                    state = CASE WHEN o.given_up THEN 'abandoned' WHEN o.failed THEN 'pending' ELSE 'delivered' END,
                    tries = d.tries + 1,
                    delivered_at = CASE WHEN o.failed THEN d.delivered_at ELSE o.at END,
                    due_at = CASE WHEN o.failed THEN o.retry_at ELSE d.due_at END,
                    failing_since = CASE WHEN o.failed THEN coalesce(d.failing_since, o.at) ELSE d.failing_since END,
                    last_error = CASE WHEN o.failed THEN o.reason END,
                    claimed_by = NULL, claimed_until = NULL
                FROM o
                WHERE d.endpoint_id = o.endpoint_id AND d.session_id = o.session_id AND d.number = o.number
                  AND d.state = 'pending' AND d.claimed_by = $1
                RETURNING 1)
            SELECT count(*) FROM recorded
            """
        static let types: [PostgresDataType] = [.text, .textArray, .textArray, .textArray, .int8Array, .float8Array, .boolArray, .float8Array,
                                                .boolArray]
    }

    /// Deliveries sent again (`$2`…`$9`, one array per column; one named
    /// twice counts once), due at `$1`: each not written yet is written
    /// pending; one delivered or given up is pending again, its tries and
    /// failing time forgotten, its body kept. A pending one is left to its
    /// own tries (one in flight keeps its claim). One written anew was
    /// delivered at once (counted on its endpoint): its row counts it from
    /// now on, so its endpoint's count goes down by one (`xmax = 0`: the row
    /// was inserted, not updated). The endpoint's row is locked first, as an
    /// enable (``UpdateWebhookEndpoint``) and an advance lock it, so the two
    /// never wait on each other in opposite orders. Answers how many were
    /// written or put back.
    enum RequeueDeliveries: StatementText {
        static let sql = """
            WITH locked AS (
                SELECT id FROM webhook_endpoint WHERE id = ANY($2::text[]) FOR NO KEY UPDATE),
            given AS (
                SELECT DISTINCT ON (endpoint_id, session_id, number) *
                FROM unnest($2::text[], $3::text[], $7::int8[], $4::text[], $8::int8[], $5::text[], $6::bytea[], $9::float8[])
                    AS d(endpoint_id, session_id, number, feed_tx, feed_row, type, body, queued_at)
                WHERE d.endpoint_id IN (SELECT id FROM locked)),
            requeued AS (
                INSERT INTO webhook_delivery (endpoint_id, session_id, number, cursor_tx, cursor_row, type, body, state, tries, queued_at, due_at)
                SELECT endpoint_id, session_id, number, feed_tx::xid8, feed_row, type, body, 'pending', 0, queued_at, $1 FROM given
                ON CONFLICT (endpoint_id, session_id, number) DO UPDATE
                    SET state = 'pending', due_at = $1, tries = 0, failing_since = NULL, delivered_at = NULL
                    WHERE webhook_delivery.state IN ('delivered', 'abandoned')
                RETURNING endpoint_id, xmax = 0 AS inserted),
            uncounted AS (
                UPDATE webhook_endpoint AS e SET delivered_count = greatest(e.delivered_count - n.count, 0)
                FROM (SELECT endpoint_id, count(*) AS count FROM requeued WHERE inserted GROUP BY endpoint_id) AS n
                WHERE e.id = n.endpoint_id)
            SELECT count(*) FROM requeued
            """
        static let types: [PostgresDataType] = [.float8, .textArray, .textArray, .textArray, .textArray, .byteaArray, .int8Array, .int8Array,
                                                .float8Array]
    }

    /// An endpoint's deliveries by state, those it took at once (kept on
    /// its row, not as deliveries) among the delivered.
    enum CountDeliveries: StatementText {
        static let sql = """
            WITH e AS (SELECT delivered_count, last_delivered_at FROM webhook_endpoint WHERE id = $1)
            SELECT count(*) FILTER (WHERE state = 'delivered') + coalesce((SELECT delivered_count FROM e), 0),
                   count(*) FILTER (WHERE state = 'pending' AND failing_since IS NULL),
                   count(*) FILTER (WHERE state = 'pending' AND failing_since IS NOT NULL),
                   count(*) FILTER (WHERE state = 'abandoned'),
                   min(queued_at) FILTER (WHERE state = 'pending'),
                   greatest(max(delivered_at), (SELECT last_delivered_at FROM e))
            FROM webhook_delivery WHERE endpoint_id = $1
            """
        static let types: [PostgresDataType] = [.text]
    }

    enum PruneDeliveries: StatementText {
        static let sql = """
            WITH pruned AS (
                DELETE FROM webhook_delivery
                WHERE (state IN ('delivered', 'abandoned') AND queued_at < $1)
                   OR endpoint_id IN (SELECT id FROM webhook_endpoint WHERE removed_at IS NOT NULL AND removed_at < $1)
                RETURNING 1)
            SELECT count(*) FROM pruned
            """
        static let types: [PostgresDataType] = [.float8]
    }
}
