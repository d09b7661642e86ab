import CheckoutEngine
import Foundation
import Logging
import PostgresNIO

/// The text of one statement the store runs: prepared once on each pooled
/// connection (under its type's name), then only bound and executed. The
/// parameter types are declared, never inferred from a first binding (a
/// NULL there would leave the server guessing).
protocol StatementText {
    static var sql: String { get }
    static var types: [PostgresDataType] { get }
}

/// A statement of the store with its values, for postgres-nio.
struct Prepared<Text: StatementText>: PostgresPreparedStatement {
    static var name: String { "gateway_" + String(describing: Text.self) }
    static var sql: String { Text.sql }
    static var bindingDataTypes: [PostgresDataType] { Text.types }
    typealias Row = PostgresRow

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// A value bound to a statement's parameter.
enum Bound {
    case text(String?)
    case int(Int64?)
    case float(Double?)
    case bytes(Data?)
    case texts([String])
    case byteArrays([ByteBuffer])

    static func bindings(_ values: [Bound]) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            // PostgreSQL's text cannot hold U+0000 (StoredText): a value with
            // one is looked up, and written, as every store keeps it.
            case .text(let text): bindings.append(text.map(StoredText.storable))
            case .int(let int): bindings.append(int)
            case .float(let float): bindings.append(float)
            case .bytes(let data): try bindings.append(data)
            case .texts(let texts): bindings.append(texts.map(StoredText.storable))
            case .byteArrays(let buffers): bindings.append(buffers)
            }
        }
        return bindings
    }
}

extension PostgresConnection {
    /// Runs `Text` with `values` and answers its rows.
    func rows<Text: StatementText>(_ text: Text.Type, _ values: Bound..., logger: Logger) async throws -> [PostgresRow] {
        var rows: [PostgresRow] = []
        for try await row in try await execute(Prepared<Text>(bindings: try Bound.bindings(values)), logger: logger) {
            rows.append(row)
        }
        return rows
    }
}

/// Every statement the store runs, by what it does.
enum SQL {
    // MARK: Reads

    enum SessionDocument: StatementText {
        static let sql = "SELECT document FROM session WHERE id = $1"
        static let types: [PostgresDataType] = [.text]
    }


    enum SessionOfAttempt: StatementText {
        static let sql = "SELECT session_id FROM attempt WHERE id = $1"
        static let types: [PostgresDataType] = [.text]
    }

    /// The live or paid attempt of a provider holding a reference (v7's index).
    enum AttemptHoldingReference: StatementText {
        static let sql = """
            SELECT id FROM attempt WHERE provider_id = $1 AND provider_reference = $2 AND status NOT IN ('failed', 'cancelled')
            """
        static let types: [PostgresDataType] = [.text, .text]
    }

    /// Many keys' answers in one round trip (``Batcher``).
    enum Answers: StatementText {
        static let sql = "SELECT key, fingerprint, body, reference, created_at FROM idempotency WHERE key = ANY($1)"
        static let types: [PostgresDataType] = [.textArray]
    }

    /// Many sessions' versions in one round trip (``Batcher``).
    enum SessionVersions: StatementText {
        static let sql = "SELECT id, version FROM session WHERE id = ANY($1)"
        static let types: [PostgresDataType] = [.textArray]
    }


    enum Events: StatementText {
        static let sql = """
            SELECT number, session_id, at, type, attempt_id, status, provider_id, amount, currency, detail
            FROM event WHERE session_id = $1 AND number > $2 ORDER BY number
            """
        static let types: [PostgresDataType] = [.text, .int8]
    }

    enum DueAttempts: StatementText {
        static let sql = "SELECT id, session_id FROM attempt WHERE due_at IS NOT NULL AND due_at <= $1 ORDER BY due_at, id LIMIT $2"
        static let types: [PostgresDataType] = [.float8, .int8]
    }

    /// Takes the due attempts no one else holds: rows another host is
    /// claiming at this moment are skipped (`SKIP LOCKED`), rows it claimed
    /// and whose claim has not ended are passed over, so no two hosts get
    /// one attempt. A claimant may take its own claims again.
    enum ClaimDueAttempts: StatementText {
        static let sql = """
            WITH due AS (
                SELECT id FROM attempt
                WHERE due_at IS NOT NULL AND due_at <= $1
                  AND (claimed_until IS NULL OR claimed_until <= $1 OR claimed_by = $3)
                ORDER BY due_at, id LIMIT $2
                FOR UPDATE SKIP LOCKED)
            UPDATE attempt SET claimed_until = $4, claimed_by = $3 FROM due WHERE attempt.id = due.id
            RETURNING attempt.id, attempt.session_id, attempt.due_at
            """
        static let types: [PostgresDataType] = [.float8, .int8, .text, .float8]
    }

    enum HeldPayments: StatementText {
        static let sql = """
            SELECT id, session_id FROM attempt
            WHERE due_at IS NOT NULL AND status IN ('succeeded', 'authorized') ORDER BY due_at, id LIMIT $1
            """
        static let types: [PostgresDataType] = [.int8]
    }

    enum ExpiredSessions: StatementText {
        static let sql = """
            SELECT id FROM session
            WHERE status = 'open' AND expires_at <= $1
              AND NOT EXISTS (SELECT 1 FROM attempt WHERE attempt.session_id = session.id AND attempt.due_at IS NOT NULL)
            ORDER BY expires_at, id LIMIT $2
            """
        static let types: [PostgresDataType] = [.float8, .int8]
    }

    enum WebhookSeen: StatementText {
        static let sql = "SELECT 1 FROM webhook WHERE provider_id = $1 AND event_id = $2"
        static let types: [PostgresDataType] = [.text, .text]
    }

    // MARK: Commits

    /// Changes gathered in one round trip and one transaction
    /// (`gateway_commit_many`, migration v5): one row per change, in order,
    /// with its refusal's SQLSTATE or its events' numbers.
    enum CommitMany: StatementText {
        static let sql = "SELECT item_no, refusal, numbers FROM gateway_commit_many($1::jsonb, $2, $3)"
        static let types: [PostgresDataType] = [.text, .byteaArray, .byteaArray]
    }

    // MARK: The store's own connection (start, probes)

    /// Whether the database answers at all (a busy pool is not a lost database).
    enum Probe: StatementText {
        static let sql = "SELECT 1"
        static let types: [PostgresDataType] = []
    }

    /// Records the hosts' check `$1` of key `$2` (`idempotency_key`, the
    /// fingerprint key's; `webhook_sealing_key`, the webhook secrets') when
    /// there is none, and answers the one kept. Two hosts starting together:
    /// the second's insert waits for the first's, then inserts nothing, and
    /// its own snapshot (taken before the first committed) does not see the
    /// row: no row back, and the next try's snapshot does.
    enum AgreeOnKeyCheck: StatementText {
        static let sql = """
            WITH inserted AS (INSERT INTO shared_key_check (name, value) VALUES ($2, $1)
                              ON CONFLICT (name) DO NOTHING RETURNING value)
            SELECT value FROM inserted UNION ALL SELECT value FROM shared_key_check WHERE name = $2 LIMIT 1
            """
        static let types: [PostgresDataType] = [.text, .text]
    }

    /// Two hosts starting together migrate one after the other (the lock
    /// ends with the migrations' transaction).
    enum MigrationLock: StatementText {
        static let sql = "SELECT pg_advisory_xact_lock(hashtext('gateway migrations ' || $1))"
        static let types: [PostgresDataType] = [.text]
    }

    enum AppliedMigrations: StatementText {
        static let sql = "SELECT name FROM schema_migration ORDER BY position"
        static let types: [PostgresDataType] = []
    }

    enum RecordMigration: StatementText {
        static let sql = "INSERT INTO schema_migration (position, name) VALUES ($1, $2)"
        static let types: [PostgresDataType] = [.int8, .text]
    }

    // MARK: API keys

    static let apiKeyColumns = "id, name, mode, hash, prefix, created_at, revoked_at"

    enum InsertAPIKey: StatementText {
        static let sql = "INSERT INTO api_key (\(apiKeyColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        static let types: [PostgresDataType] = [.text, .text, .text, .text, .text, .float8, .float8]
    }

    enum APIKeyByHash: StatementText {
        static let sql = "SELECT \(apiKeyColumns) FROM api_key WHERE hash = $1"
        static let types: [PostgresDataType] = [.text]
    }

    enum APIKeys: StatementText {
        static let sql = "SELECT \(apiKeyColumns) FROM api_key ORDER BY created_at, id"
        static let types: [PostgresDataType] = []
    }

    /// A key revoked already keeps its first time.
    enum RevokeAPIKey: StatementText {
        static let sql = "UPDATE api_key SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING \(apiKeyColumns)"
        static let types: [PostgresDataType] = [.text, .float8]
    }
}
