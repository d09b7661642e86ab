import GRDB

/// Every schema change, by name, in order. A migration, once shipped, is never
/// edited: a change is a new migration appended here.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1: sessions, attempts, events, idempotency, webhooks") { db in
            try db.execute(sql: """
                CREATE TABLE session (
                    id TEXT PRIMARY KEY NOT NULL,
                    status TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    amount INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    order_id TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    -- The session and its attempts as JSON. Sessions never hold an
                    -- instrument: no card number, CVV or token secret is written.
                    document BLOB NOT NULL
                );
                CREATE INDEX session_open_by_expiry ON session(expires_at) WHERE status = 'open';

                -- One row per attempt (the payment id of a succeeded one), for
                -- lookups and for reconciliation's queue: due_at is the next
                -- verify of a pending attempt or the lease end of a processing
                -- one, and NULL once final.
                CREATE TABLE attempt (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    provider_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    due_at REAL
                );
                CREATE INDEX attempt_by_session ON attempt(session_id);
                CREATE INDEX attempt_due ON attempt(due_at) WHERE due_at IS NOT NULL;

                -- The audit trail: every transition of every session.
                CREATE TABLE event (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id TEXT NOT NULL,
                    at REAL NOT NULL,
                    type TEXT NOT NULL,
                    attempt_id TEXT,
                    status TEXT,
                    provider_id TEXT,
                    amount INTEGER,
                    currency TEXT,
                    detail TEXT
                );
                CREATE INDEX event_by_session ON event(session_id, sequence);
                CREATE TRIGGER event_is_append_only_update BEFORE UPDATE ON event
                    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
                CREATE TRIGGER event_is_append_only_delete BEFORE DELETE ON event
                    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;

                -- The first answer given under each idempotency key.
                CREATE TABLE idempotency (
                    key TEXT PRIMARY KEY NOT NULL,
                    fingerprint TEXT NOT NULL,
                    body BLOB NOT NULL,
                    created_at REAL NOT NULL
                );

                -- Provider notifications already applied (deduplication).
                CREATE TABLE webhook (
                    provider_id TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    PRIMARY KEY (provider_id, event_id)
                );
                """)
        }
        migrator.registerMigration("v2: idempotency keys bound with their intent (answer filled in later)") { db in
            try db.execute(sql: """
                CREATE TABLE idempotency_v2 (
                    key TEXT PRIMARY KEY NOT NULL,
                    fingerprint TEXT NOT NULL,
                    -- NULL while the outcome of the request is not known yet.
                    body BLOB,
                    -- What the request acted on (an attempt id, a provider key).
                    reference TEXT,
                    created_at REAL NOT NULL
                );
                INSERT INTO idempotency_v2 (key, fingerprint, body, reference, created_at)
                    SELECT key, fingerprint, body, NULL, created_at FROM idempotency;
                DROP TABLE idempotency;
                ALTER TABLE idempotency_v2 RENAME TO idempotency;
                """)
        }
        migrator.registerMigration("api keys: per mode, only a hash of each secret") { db in
            // A key's secret is never written: only its SHA-256 (unique, the
            // lookup of every request whose key is not in the server's
            // cache) and a short prefix to tell keys apart. Revoked keys stay.
            try db.execute(sql: """
                CREATE TABLE api_key (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT,
                    mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
                    hash TEXT NOT NULL UNIQUE,
                    prefix TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );
                """)
        }
        migrator.registerMigration("events numbered per session") { db in
            // `id` keeps the log's order across sessions (the old `sequence`);
            // `number` is the event's number in its session, 1, 2, 3, ..., what
            // a stream resumes after. The writer assigns it in the commit's
            // transaction; the unique index refuses a number given twice.
            // Existing events are numbered in the order they were recorded.
            try db.execute(sql: """
                CREATE TABLE event_numbered (
                    id INTEGER PRIMARY KEY,
                    session_id TEXT NOT NULL,
                    number INTEGER NOT NULL CHECK (number > 0),
                    at REAL NOT NULL,
                    type TEXT NOT NULL,
                    attempt_id TEXT,
                    status TEXT,
                    provider_id TEXT,
                    amount INTEGER,
                    currency TEXT,
                    detail TEXT
                );
                INSERT INTO event_numbered (id, session_id, number, at, type, attempt_id, status, provider_id, amount, currency, detail)
                    SELECT sequence, session_id, row_number() OVER (PARTITION BY session_id ORDER BY sequence),
                           at, type, attempt_id, status, provider_id, amount, currency, detail
                    FROM event;
                DROP TRIGGER event_is_append_only_update;
                DROP TRIGGER event_is_append_only_delete;
                DROP TABLE event;
                ALTER TABLE event_numbered RENAME TO event;
                CREATE UNIQUE INDEX event_number ON event(session_id, number);
                CREATE TRIGGER event_is_append_only_update BEFORE UPDATE ON event
                    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
                CREATE TRIGGER event_is_append_only_delete BEFORE DELETE ON event
                    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
                """)
        }
        migrator.registerMigration("sessions count their events") { db in
            // The session row holds the number of its last event, kept by the
            // commit that writes them: a commit numbers its events from the
            // count the session's own update returns, with no read of the log.
            try db.execute(sql: """
                ALTER TABLE session ADD COLUMN events INTEGER NOT NULL DEFAULT 0 CHECK (events >= 0);
                UPDATE session SET events = coalesce((SELECT max(number) FROM event WHERE event.session_id = session.id), 0);
                """)
        }
        migrator.registerMigration("one provider reference, one payment") { db in
            // An attempt's provider reference, unique per provider among
            // attempts neither failed nor cancelled: a second payment can
            // never be recorded under another's reference
            // (StoreConflict.referenceHeld). Attempts written before are
            // filled in from their sessions' documents; where two live or
            // paid attempts of one provider already share a reference (the
            // defect this closes), neither gets it here, so that the store
            // keeps working and both stay as their documents say.
            try db.execute(sql: """
                ALTER TABLE attempt ADD COLUMN provider_reference TEXT;
                UPDATE attempt SET provider_reference = (
                    SELECT json_extract(a.value, '$.providerReference')
                    FROM session s, json_each(CAST(s.document AS TEXT), '$.attempts') AS a
                    WHERE s.id = attempt.session_id AND json_extract(a.value, '$.id') = attempt.id);
                UPDATE attempt SET provider_reference = NULL
                WHERE status NOT IN ('failed', 'cancelled') AND (provider_id, provider_reference) IN (
                    SELECT provider_id, provider_reference FROM attempt
                    WHERE provider_reference IS NOT NULL AND status NOT IN ('failed', 'cancelled')
                    GROUP BY provider_id, provider_reference HAVING count(*) > 1);
                CREATE UNIQUE INDEX attempt_provider_reference ON attempt(provider_id, provider_reference)
                    WHERE provider_reference IS NOT NULL AND status NOT IN ('failed', 'cancelled');
                """)
        }
        migrator.registerMigration("merchant webhooks: endpoints and their deliveries") { db in
            // The outbox is the event log (written with the change it reports);
            // its rows are numbered in commit order (`event.id`, one writer), the
            // feed's cursor. An endpoint's cursor is where its fan-out stands; a
            // delivery is one event for one endpoint, its body written once.
            // Secrets are sealed (AES-GCM under a key file outside the database).
            try db.execute(sql: """
                CREATE TABLE webhook_endpoint (
                    id TEXT PRIMARY KEY NOT NULL,
                    url TEXT NOT NULL,
                    mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
                    types TEXT,
                    description TEXT,
                    signing TEXT NOT NULL CHECK (signing IN ('v1', 'v1a')),
                    secret BLOB NOT NULL,
                    public_key TEXT,
                    previous_secret BLOB,
                    previous_until REAL,
                    state TEXT NOT NULL CHECK (state IN ('enabled', 'disabled')),
                    state_reason TEXT,
                    created_at REAL NOT NULL,
                    removed_at REAL,
                    cursor_tx INTEGER NOT NULL,
                    cursor_row INTEGER NOT NULL
                );
                CREATE TABLE webhook_delivery (
                    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoint(id),
                    session_id TEXT NOT NULL,
                    number INTEGER NOT NULL,
                    cursor_tx INTEGER NOT NULL,
                    cursor_row INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    body BLOB NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'abandoned')),
                    tries INTEGER NOT NULL,
                    queued_at REAL NOT NULL,
                    due_at REAL NOT NULL,
                    failing_since REAL,
                    last_error TEXT,
                    delivered_at REAL,
                    claimed_by TEXT,
                    claimed_until REAL,
                    PRIMARY KEY (endpoint_id, session_id, number)
                ) WITHOUT ROWID;
                CREATE TABLE key_check (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE INDEX webhook_delivery_due ON webhook_delivery(due_at, cursor_tx, cursor_row) WHERE state = 'pending';
                CREATE INDEX webhook_delivery_feed ON webhook_delivery(endpoint_id, cursor_tx, cursor_row);
                """)
        }
        migrator.registerMigration("merchant webhooks: delivered at once, fan-out lease, feed start") { db in
            // A healthy endpoint's events are sent at once and only counted
            // (delivered_count, last_delivered_at); rows are written for what
            // was not delivered. One host at a time fans an endpoint out
            // (fanout_by until fanout_until). A replay reaches back to where
            // the endpoint's feed began (start_*): before its first delivery,
            // or its cursor when it has none.
            try db.execute(sql: """
                ALTER TABLE webhook_endpoint ADD COLUMN delivered_count INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE webhook_endpoint ADD COLUMN last_delivered_at REAL;
                ALTER TABLE webhook_endpoint ADD COLUMN fanout_by TEXT;
                ALTER TABLE webhook_endpoint ADD COLUMN fanout_until REAL;
                ALTER TABLE webhook_endpoint ADD COLUMN start_tx INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE webhook_endpoint ADD COLUMN start_row INTEGER NOT NULL DEFAULT 0;
                UPDATE webhook_endpoint SET start_row = coalesce(
                    (SELECT min(d.cursor_row) - 1 FROM webhook_delivery AS d WHERE d.endpoint_id = webhook_endpoint.id), cursor_row);
                """)
        }
        return migrator
    }
}
