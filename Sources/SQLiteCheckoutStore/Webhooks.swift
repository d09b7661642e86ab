import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB

/// Merchants' webhook endpoints and deliveries (``WebhookStore``), beside
/// the event log they are made from.
///
/// The feed's position is `event.id`: SQLite has one writer, so rows are
/// numbered in the order their transactions commit, and a reader never sees
/// a row appear behind one it has read (the cursor's transaction part is 0).
/// Every write here goes through GRDB's writer, between the commit
/// batcher's transactions; each one is a handful of statements, and the
/// deliverer batches them (one advance per stretch of the feed; for the rows
/// of what was not delivered at once, one claim and record per turn).
extension SQLiteCheckoutStore: WebhookStore {
    public func feed(after cursor: EventCursor, mode: PaymentMode, types: Set<String>?, limit: Int) async throws -> FeedPage {
        let rows = try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT e.id, e.number, e.session_id, e.at, e.type, e.attempt_id, e.status, e.provider_id, e.amount, e.currency, e.detail,
                       coalesce(json_extract(CAST(s.document AS TEXT), '$.mode'), 'live') AS mode
                FROM event AS e JOIN session AS s ON s.id = e.session_id
                WHERE e.id > ? ORDER BY e.id LIMIT ?
                """, arguments: [cursor.row, limit])
        }
        var events: [FeedEvent] = []
        var next = cursor
        for row in rows {
            next = EventCursor(transaction: 0, row: row["id"])
            let event = EventRow.event(from: row)
            guard row["mode"] == mode.rawValue, types.map({ $0.contains(event.type.rawValue) }) ?? true else { continue }
            events.append(FeedEvent(cursor: next, mode: mode, event: event))
        }
        return FeedPage(events: events, next: next, more: rows.count == limit)
    }

    public func createWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws {
        try await writer.write { db in
            // From the feed's end now: the events committed from then on.
            let end = try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM event") ?? 0
            try db.execute(sql: """
                INSERT INTO webhook_endpoint (id, url, mode, types, description, signing, secret, public_key, previous_secret, previous_until,
                                              state, state_reason, created_at, removed_at, cursor_tx, cursor_row, start_tx, start_row)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, ?)
                """, arguments: StatementArguments(Self.endpointArguments(endpoint) + [end, end]))
        }
    }

    public func webhookEndpoints() async throws -> [WebhookEndpointRecord] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.endpointColumns) FROM webhook_endpoint WHERE removed_at IS NULL ORDER BY created_at, id")
                .map(Self.endpoint(from:))
        }
    }

    public func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.endpointColumns) FROM webhook_endpoint WHERE id = ?", arguments: [id])
                .map(Self.endpoint(from:))
        }
    }

    public func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord, from previous: WebhookEndpointRecord, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE webhook_endpoint SET url = ?, mode = ?, types = ?, description = ?, signing = ?, secret = ?, public_key = ?,
                    previous_secret = ?, previous_until = ?, state = ?, state_reason = ?, created_at = ?, removed_at = ?
                WHERE id = ? AND secret = ? AND state = ? AND removed_at IS ?
                """, arguments: StatementArguments(Array(Self.endpointArguments(endpoint).dropFirst())
                    + [endpoint.id, previous.secret, previous.state.rawValue, previous.removedAt?.timeIntervalSince1970]))
            guard db.changesCount == 1 else { return false }
            if previous.state == .disabled && endpoint.state == .enabled {
                try db.execute(sql: """
                    UPDATE webhook_delivery SET due_at = ?, tries = 0, failing_since = NULL WHERE endpoint_id = ? AND state = 'pending'
                    """, arguments: [now.timeIntervalSince1970, endpoint.id])
            }
            return true
        }
    }

    public func leaseFanOut(endpoint: String, claimant: String, at now: Date, until: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE webhook_endpoint SET fanout_by = ?1, fanout_until = ?2
                WHERE id = ?3 AND (fanout_by IS NULL OR fanout_by = ?1 OR fanout_until <= ?4)
                """, arguments: [claimant, until.timeIntervalSince1970, endpoint, now.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    public func releaseFanOut(claimant: String) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE webhook_endpoint SET fanout_by = NULL, fanout_until = NULL WHERE fanout_by = ?", arguments: [claimant])
        }
    }

    public func pendingSessions(endpoint: String, among sessions: [String]) async throws -> Set<String> {
        guard !sessions.isEmpty else { return [] }
        var list = JSONWriter(capacity: 32 * sessions.count)
        list.beginArray()
        for session in sessions { list.string(session) }
        list.endArray()
        let json = String(decoding: list.bytes, as: UTF8.self)
        return try await writer.read { db in
            Set(try String.fetchAll(db.cachedStatement(sql: """
                SELECT DISTINCT session_id FROM webhook_delivery
                WHERE endpoint_id = ? AND state = 'pending' AND session_id IN (SELECT value FROM json_each(?))
                """), arguments: [endpoint, json]))
        }
    }

    public func advance(endpoint: String, from: EventCursor, to: EventCursor, _ sent: SentStretch, claimant: String, until: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE webhook_endpoint SET cursor_tx = ?1, cursor_row = ?2, delivered_count = delivered_count + ?3,
                    last_delivered_at = CASE WHEN ?4 IS NULL THEN last_delivered_at ELSE max(coalesce(last_delivered_at, ?4), ?4) END
                WHERE id = ?5 AND cursor_tx = ?6 AND cursor_row = ?7
                """, arguments: [Int64(clamping: to.transaction), to.row, sent.delivered, sent.lastDelivered?.timeIntervalSince1970,
                                 endpoint, Int64(clamping: from.transaction), from.row])
            guard db.changesCount == 1 else { return false }
            let insert = try db.cachedStatement(sql: """
                INSERT INTO webhook_delivery (endpoint_id, session_id, number, cursor_tx, cursor_row, type, body, state, tries, queued_at, due_at,
                                              failing_since, last_error, claimed_by, claimed_until)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
            for (delivery, claimed) in sent.queue.map({ ($0, false) }) + sent.inFlight.map({ ($0, true) }) {
                try insert.execute(arguments: [delivery.endpointID, delivery.sessionID, delivery.number, Int64(clamping: delivery.cursor.transaction),
                                               delivery.cursor.row, delivery.type, delivery.body, delivery.tries, delivery.queuedAt.timeIntervalSince1970,
                                               delivery.dueAt.timeIntervalSince1970, delivery.failingSince?.timeIntervalSince1970, delivery.lastError,
                                               claimed ? claimant : nil, claimed ? until.timeIntervalSince1970 : nil])
            }
            return true
        }
    }

    public func claimDeliveries(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [WebhookDelivery] {
        try await writer.write { db in try Self.claim(db, at: now, limit: limit, claimant: claimant, until: until) }
    }

    public func recordDeliveries(_ outcomes: [DeliveryOutcome], claimant: String) async throws -> Int {
        guard !outcomes.isEmpty else { return 0 }
        return try await writer.write { db in try Self.record(db, outcomes, claimant: claimant) }
    }

    public func recordThenClaim(_ outcomes: [DeliveryOutcome], claimant: String, at now: Date, limit: Int, until: Date) async throws -> [WebhookDelivery] {
        guard !outcomes.isEmpty || limit > 0 else { return [] }
        return try await writer.write { db in
            if !outcomes.isEmpty { _ = try Self.record(db, outcomes, claimant: claimant) }
            return limit > 0 ? try Self.claim(db, at: now, limit: limit, claimant: claimant, until: until) : []
        }
    }

    private static func claim(_ db: Database, at now: Date, limit: Int, claimant: String, until: Date) throws -> [WebhookDelivery] {
        // In the due index's order (due time, then the feed's), stopping at `limit`.
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(deliveryColumns("d")) FROM webhook_delivery AS d INDEXED BY webhook_delivery_due
            JOIN webhook_endpoint AS e ON e.id = d.endpoint_id
            WHERE d.state = 'pending' AND d.due_at <= ?1 AND (d.claimed_until IS NULL OR d.claimed_until <= ?1)
              AND e.state = 'enabled' AND e.removed_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_delivery AS p
                              WHERE p.endpoint_id = d.endpoint_id AND p.session_id = d.session_id AND p.number < d.number AND p.state = 'pending')
            ORDER BY d.due_at, d.cursor_tx, d.cursor_row LIMIT ?2
            """), arguments: [now.timeIntervalSince1970, limit])
        let claim = try db.cachedStatement(sql: """
            UPDATE webhook_delivery SET claimed_by = ?, claimed_until = ? WHERE endpoint_id = ? AND session_id = ? AND number = ?
            """)
        return try rows.map { row in
            let delivery = Self.delivery(from: row)
            try claim.execute(arguments: [claimant, until.timeIntervalSince1970, delivery.endpointID, delivery.sessionID, delivery.number])
            return delivery
        }
    }

    private static func record(_ db: Database, _ outcomes: [DeliveryOutcome], claimant: String) throws -> Int {
        let delivered = try db.cachedStatement(sql: """
            UPDATE webhook_delivery SET state = 'delivered', tries = tries + 1, delivered_at = ?, last_error = NULL,
                claimed_by = NULL, claimed_until = NULL
            WHERE endpoint_id = ? AND session_id = ? AND number = ? AND state = 'pending' AND claimed_by = ?
            """)
        let failed = try db.cachedStatement(sql: """
            UPDATE webhook_delivery SET state = ?, tries = tries + 1, due_at = ?, failing_since = coalesce(failing_since, ?), last_error = ?,
                claimed_by = NULL, claimed_until = NULL
            WHERE endpoint_id = ? AND session_id = ? AND number = ? AND state = 'pending' AND claimed_by = ?
            """)
        var recorded = 0
        for outcome in outcomes {
            if let failure = outcome.failure {
                try failed.execute(arguments: [failure.giveUp ? "abandoned" : "pending", failure.retryAt.timeIntervalSince1970,
                                               outcome.at.timeIntervalSince1970, failure.reason,
                                               outcome.endpointID, outcome.sessionID, outcome.number, claimant])
            } else {
                try delivered.execute(arguments: [outcome.at.timeIntervalSince1970, outcome.endpointID, outcome.sessionID, outcome.number, claimant])
            }
            recorded += db.changesCount
        }
        return recorded
    }

    public func requeueDeliveries(_ deliveries: [WebhookDelivery], at now: Date) async throws -> Int {
        guard !deliveries.isEmpty else { return 0 }
        return try await writer.write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT INTO webhook_delivery (endpoint_id, session_id, number, cursor_tx, cursor_row, type, body, state, tries, queued_at, due_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING
                """)
            let again = try db.cachedStatement(sql: """
                UPDATE webhook_delivery SET state = 'pending', due_at = ?, tries = 0, failing_since = NULL, delivered_at = NULL
                WHERE endpoint_id = ? AND session_id = ? AND number = ? AND state IN ('delivered', 'abandoned')
                """)
            // One delivered at once has no row but is counted on its endpoint: written again, it is counted by its row.
            let uncount = try db.cachedStatement(sql: "UPDATE webhook_endpoint SET delivered_count = max(delivered_count - 1, 0) WHERE id = ?")
            var count = 0
            for delivery in deliveries {
                try insert.execute(arguments: [delivery.endpointID, delivery.sessionID, delivery.number, Int64(clamping: delivery.cursor.transaction),
                                               delivery.cursor.row, delivery.type, delivery.body, delivery.queuedAt.timeIntervalSince1970,
                                               now.timeIntervalSince1970])
                if db.changesCount == 1 {
                    try uncount.execute(arguments: [delivery.endpointID])
                    count += 1
                    continue
                }
                try again.execute(arguments: [now.timeIntervalSince1970, delivery.endpointID, delivery.sessionID, delivery.number])
                count += db.changesCount
            }
            return count
        }
    }

    public func deliveryCounts(endpoint: String) async throws -> DeliveryCounts {
        try await writer.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT count(*) FILTER (WHERE state = 'delivered') AS delivered,
                       count(*) FILTER (WHERE state = 'pending' AND failing_since IS NULL) AS pending,
                       count(*) FILTER (WHERE state = 'pending' AND failing_since IS NOT NULL) AS retrying,
                       count(*) FILTER (WHERE state = 'abandoned') AS abandoned,
                       min(queued_at) FILTER (WHERE state = 'pending') AS oldest,
                       max(delivered_at) AS last,
                       (SELECT delivered_count FROM webhook_endpoint WHERE id = ?1) AS at_once,
                       (SELECT last_delivered_at FROM webhook_endpoint WHERE id = ?1) AS last_at_once
                FROM webhook_delivery WHERE endpoint_id = ?1
                """, arguments: [endpoint])
            let oldest: Double? = row?["oldest"]
            let last = [row?["last"] as Double?, row?["last_at_once"] as Double?].compactMap { $0 }.max()
            let delivered: Int = (row?["delivered"] ?? 0) + (row?["at_once"] ?? 0)
            return DeliveryCounts(delivered: delivered, pending: row?["pending"] ?? 0, retrying: row?["retrying"] ?? 0,
                                  abandoned: row?["abandoned"] ?? 0, oldestUndelivered: oldest.map(Date.init(timeIntervalSince1970:)),
                                  lastDelivered: last.map(Date.init(timeIntervalSince1970:)))
        }
    }

    public func agreeOnSealingKey(check: String) async throws -> String? {
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO key_check (name, value) VALUES ('webhook_sealing_key', ?) ON CONFLICT (name) DO NOTHING", arguments: [check])
            return try String.fetchOne(db, sql: "SELECT value FROM key_check WHERE name = 'webhook_sealing_key'")
        }
    }

    public func pruneDeliveries(before: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: """
                DELETE FROM webhook_delivery
                WHERE (state IN ('delivered', 'abandoned') AND queued_at < ?1)
                   OR endpoint_id IN (SELECT id FROM webhook_endpoint WHERE removed_at IS NOT NULL AND removed_at < ?1)
                """, arguments: [before.timeIntervalSince1970])
            return db.changesCount
        }
    }

    // MARK: Rows

    private static let endpointColumns = """
        id, url, mode, types, description, signing, secret, public_key, previous_secret, previous_until, state, state_reason, created_at, removed_at,
        cursor_tx, cursor_row, start_tx, start_row
        """

    /// An endpoint's columns in ``endpointColumns``' order.
    private static func endpointArguments(_ endpoint: WebhookEndpointRecord) -> [(any DatabaseValueConvertible)?] {
        [endpoint.id, endpoint.url, endpoint.mode.rawValue, endpoint.types.map(WebhookTypes.text), endpoint.description,
         endpoint.signing.rawValue, endpoint.secret, endpoint.publicKey, endpoint.previousSecret,
         endpoint.previousUntil?.timeIntervalSince1970, endpoint.state.rawValue, endpoint.stateReason,
         endpoint.createdAt.timeIntervalSince1970, endpoint.removedAt?.timeIntervalSince1970]
    }

    /// A row as an endpoint; one whose mode, signing or state the table's
    /// checks would refuse (written around them) is an error.
    private static func endpoint(from row: Row) throws -> WebhookEndpointRecord {
        let id: String = row["id"]
        func parsed<T: RawRepresentable<String>>(_ column: String) throws -> T {
            let stored: String = row[column]
            guard let value = T(rawValue: stored) else {
                throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_CHECK, message: "webhook endpoint \(id) has no valid \(column) (\(stored.prefix(16)))")
            }
            return value
        }
        let types: String? = row["types"]
        let previousUntil: Double? = row["previous_until"]
        let removedAt: Double? = row["removed_at"]
        return WebhookEndpointRecord(
            id: id, url: row["url"], mode: try parsed("mode"), types: try types.map(WebhookTypes.list),
            description: row["description"], signing: try parsed("signing"), secret: row["secret"], publicKey: row["public_key"],
            previousSecret: row["previous_secret"], previousUntil: previousUntil.map(Date.init(timeIntervalSince1970:)),
            state: try parsed("state"), stateReason: row["state_reason"], createdAt: Date(timeIntervalSince1970: row["created_at"]),
            removedAt: removedAt.map(Date.init(timeIntervalSince1970:)),
            cursor: EventCursor(transaction: UInt64(clamping: row["cursor_tx"] as Int64), row: row["cursor_row"]),
            start: EventCursor(transaction: UInt64(clamping: row["start_tx"] as Int64), row: row["start_row"]))
    }

    private static func deliveryColumns(_ table: String) -> String {
        ["endpoint_id", "session_id", "number", "cursor_tx", "cursor_row", "type", "body", "state", "tries", "queued_at", "due_at",
         "failing_since", "last_error", "delivered_at"].map { "\(table).\($0)" }.joined(separator: ", ")
    }

    private static func delivery(from row: Row) -> WebhookDelivery {
        let failingSince: Double? = row["failing_since"]
        let deliveredAt: Double? = row["delivered_at"]
        let state: String = row["state"]
        let transaction: Int64 = row["cursor_tx"]
        return WebhookDelivery(
            endpointID: row["endpoint_id"], sessionID: row["session_id"], number: row["number"],
            cursor: EventCursor(transaction: UInt64(clamping: transaction), row: row["cursor_row"]), type: row["type"], body: row["body"],
            state: WebhookDelivery.State(rawValue: state) ?? .pending, tries: row["tries"],
            queuedAt: Date(timeIntervalSince1970: row["queued_at"]), dueAt: Date(timeIntervalSince1970: row["due_at"]),
            failingSince: failingSince.map(Date.init(timeIntervalSince1970:)), lastError: row["last_error"],
            deliveredAt: deliveredAt.map(Date.init(timeIntervalSince1970:)))
    }
}
