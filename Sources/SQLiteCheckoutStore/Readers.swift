import GRDB
import Synchronization

/// Read-only connections of the store's own for its point lookups.
///
/// A lookup through GRDB checks a reader out of its pool, hops through the
/// reader's dispatch queue and builds a cursor: together more than the one
/// indexed SELECT it runs. Here a lookup takes a free connection from a list
/// under a lock, and runs its prepared statement (``StatementSet``) on the
/// caller's thread. A lookup that finds every connection taken opens another,
/// kept for later: there are never more than the threads that look things up
/// at once.
final class Readers: Sendable {
    /// The lookups, each one indexed SELECT.
    enum Lookup: Int, StatementKind {
        case key, sessionDocument, sessionVersion, sessionOfAttempt, attemptHoldingReference

        var position: Int { rawValue }

        var sql: String {
            switch self {
            case .key: "SELECT fingerprint, body, reference, created_at FROM idempotency WHERE key = ?"
            case .sessionDocument: "SELECT document FROM session WHERE id = ?"
            case .sessionVersion: "SELECT version FROM session WHERE id = ?"
            case .sessionOfAttempt: "SELECT session_id FROM attempt WHERE id = ?"
            case .attemptHoldingReference: """
                SELECT id FROM attempt INDEXED BY attempt_provider_reference
                WHERE provider_id = ? AND provider_reference = ? AND provider_reference IS NOT NULL AND status NOT IN ('failed', 'cancelled')
                """
            }
        }
    }

    private let path: String
    private let busyTimeoutMilliseconds: Int32
    private let free: Mutex<[StatementSet<Lookup>]>

    /// Opens `count` connections to the database at `path` (which exists).
    init(path: String, busyTimeoutMilliseconds: Int32, count: Int) throws {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        free = Mutex(try (0..<count).map { _ in try StatementSet<Lookup>(readOnly: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) })
    }

    /// Runs `body` on a connection no one else is using.
    func withConnection<T>(_ body: (StatementSet<Lookup>) throws -> T) throws -> T {
        let connection = try free.withLock { $0.popLast() }
            ?? StatementSet<Lookup>(readOnly: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { free.withLock { $0.append(connection) } }
        return try body(connection)
    }
}
