import Logging
import PostgresNIO

/// Every schema change, by name, in order. A migration, once shipped, is
/// never edited: a change is a new migration appended here.
///
/// They run on start, all in one transaction that first takes an advisory
/// lock named for the schema: hosts starting together wait for each other,
/// and the second finds the work done (its names in `schema_migration`). A
/// failed migration rolls back whole: no half-migrated schema.
///
/// Times are seconds since 1970 (`float8`), as the SQLite store keeps them;
/// every id, key and hash is `COLLATE "C"`, so they sort as bytes, as there.
/// Documents are `bytea`, replayed byte for byte.
enum PostgresMigrations {
    struct Migration {
        var name: String
        var statements: [String]
    }

    static let all: [Migration] = [
        Migration(name: "v1: sessions, attempts, events, idempotency, webhooks, api keys", statements: [
            """
            CREATE TABLE session (
                id text COLLATE "C" PRIMARY KEY,
                status text NOT NULL,
                version bigint NOT NULL CHECK (version > 0),
                amount bigint NOT NULL,
                currency text NOT NULL,
                order_id text NOT NULL,
                created_at float8 NOT NULL,
                updated_at float8 NOT NULL,
                expires_at float8 NOT NULL,
                -- the number of the session's last event, kept by the commits that write them
                events bigint NOT NULL DEFAULT 0 CHECK (events >= 0),
                -- the session and its attempts as JSON: never an instrument, so no card data
                document bytea NOT NULL)
            """,
            "CREATE INDEX session_open_by_expiry ON session (expires_at) WHERE status = 'open'",
            // due_at: the next verify of a pending attempt, the lease end of a
            // processing one, the next check of a held operation; NULL once
            // nothing is due. claimed_*: which host's reconciliation holds it.
            """
            CREATE TABLE attempt (
                id text COLLATE "C" PRIMARY KEY,
                session_id text COLLATE "C" NOT NULL REFERENCES session (id),
                provider_id text NOT NULL,
                status text NOT NULL,
                due_at float8,
                claimed_until float8,
                claimed_by text)
            """,
            "CREATE INDEX attempt_by_session ON attempt (session_id)",
            "CREATE INDEX attempt_due ON attempt (due_at) WHERE due_at IS NOT NULL",
            """
            CREATE TABLE event (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id text COLLATE "C" NOT NULL,
                number bigint NOT NULL CHECK (number > 0),
                at float8 NOT NULL,
                type text NOT NULL,
                attempt_id text,
                status text,
                provider_id text,
                amount bigint,
                currency text,
                detail text,
                CONSTRAINT event_number UNIQUE (session_id, number))
            """,
            """
            CREATE FUNCTION event_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$
            """,
            "CREATE TRIGGER event_no_update_or_delete BEFORE UPDATE OR DELETE ON event FOR EACH ROW EXECUTE FUNCTION event_is_append_only()",
            "CREATE TRIGGER event_no_truncate BEFORE TRUNCATE ON event FOR EACH STATEMENT EXECUTE FUNCTION event_is_append_only()",
            // Only for events of a session with no row (tools, not the engine).
            "CREATE TABLE event_counter (session_id text COLLATE \"C\" PRIMARY KEY, last bigint NOT NULL)",
            """
            CREATE TABLE idempotency (
                key text COLLATE "C" PRIMARY KEY,
                fingerprint text NOT NULL,
                -- NULL while the outcome of the request is not known yet
                body bytea,
                reference text,
                created_at float8 NOT NULL)
            """,
            """
            CREATE TABLE webhook (
                provider_id text COLLATE "C" NOT NULL,
                event_id text COLLATE "C" NOT NULL,
                received_at float8 NOT NULL,
                PRIMARY KEY (provider_id, event_id))
            """,
            // Only a hash of each secret, never the secret; revoked keys stay.
            """
            CREATE TABLE api_key (
                id text COLLATE "C" PRIMARY KEY,
                name text,
                mode text NOT NULL CHECK (mode IN ('test', 'live')),
                hash text COLLATE "C" NOT NULL UNIQUE,
                prefix text NOT NULL,
                created_at float8 NOT NULL,
                revoked_at float8)
            """,
        ]),
    ]

    /// Applies the migrations `connection`'s schema lacks; answers every
    /// applied name, in order.
    static func migrate(_ connection: PostgresConnection, schema: String, logger: Logger) async throws -> [String] {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('gateway migrations ' || \(schema)))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS schema_migration (position integer PRIMARY KEY, name text NOT NULL UNIQUE, applied_at timestamptz NOT NULL DEFAULT now())", logger: logger)
            var applied: [String] = []
            for try await name in try await connection.query("SELECT name FROM schema_migration ORDER BY position", logger: logger).decode(String.self) {
                applied.append(name)
            }
            for (position, migration) in all.enumerated() where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO schema_migration (position, name) VALUES (\(position + 1), \(migration.name))", logger: logger)
                logger.info("PostgreSQL store: migration applied: \(migration.name)")
                applied.append(migration.name)
            }
            return applied
        }
    }
}
