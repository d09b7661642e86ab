import CheckoutEngine
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// Keeps the store's connection pool, and knows whether the database
/// answers.
///
/// The pool exists only while the database answers. Until then (at start,
/// or once a call finds the database gone) the store is *down*: every call
/// fails at once with ``CheckoutEngine/StoreUnavailable``, and a recovery
/// task opens a connection of its own every so often (100 ms, doubling to
/// 2 s). When one opens, it creates the schema if need be and applies the
/// migrations (``PostgresMigrations``) on that connection, then starts a new
/// pool: the store is *up* again. A new pool rather than the old one's own
/// retries, whose backoff grows to a minute and whose waiters queue until
/// its circuit breaker trips: a host is back within about two seconds of its
/// database, and never keeps a caller waiting on a database it knows is gone.
final class PoolKeeper: Sendable {
    private enum State {
        case up(PostgresClient, Task<Void, Never>)
        case down(reason: String)
        /// For good (this host's fingerprint key is not the others'): no
        /// reconnecting until the host is restarted.
        case refused(reason: String)
        case closed
    }

    let configuration: PostgresConfiguration
    private let logger: Logger
    private let state = Mutex<State>(.down(reason: "connecting"))
    private let recovery = Mutex<Task<Void, Never>?>(nil)
    private let applied = Mutex<[String]>([])
    /// The fingerprint key's check this host expects (``SharedFingerprintKey``).
    private let keyCheck = Mutex<String?>(nil)

    func expectKeyCheck(_ check: String) {
        keyCheck.withLock { $0 = check }
    }

    /// Records `check` when the database has none, and refuses (throws
    /// ``KeyMismatch``) when it has another.
    static func agree(on check: String, _ connection: PostgresConnection, logger: Logger) async throws {
        // No row back when another host's first insert raced this one (SQL.AgreeOnKeyCheck).
        for _ in 0..<3 {
            let rows = try await connection.rows(SQL.AgreeOnKeyCheck.self, .text(check), .text("idempotency_key"), logger: logger)
            guard let kept = try rows.first?.decode(String.self) else { continue }
            guard kept == check else { throw KeyMismatch() }
            return
        }
        throw StoreUnavailable("the fingerprint key's check could not be read back")
    }

    struct KeyMismatch: Error, CustomStringConvertible {
        var description: String {
            "this host's idempotency fingerprint key (<data>/idempotency.key) is not the one the other hosts on this database use: "
                + "copy theirs to this host (sha256sum of the file must print the same on every host) and restart it; "
                + "it serves no request until then (docs/postgresql.md)"
        }
    }

    init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        startRecovery()
    }

    /// The pool, or ``CheckoutEngine/StoreUnavailable`` saying why there is none.
    func client() throws -> PostgresClient {
        switch state.withLock({ $0 }) {
        case .up(let client, _): return client
        case .down(let reason): throw StoreUnavailable("\(configuration) does not answer: \(reason)")
        case .refused(let reason): throw StoreUnavailable(reason)
        case .closed: throw StoreUnavailable("the store is closed")
        }
    }

    var isUp: Bool {
        if case .up = state.withLock({ $0 }) { return true }
        return false
    }

    /// The migrations the database has, in order (read by the last recovery).
    var migrations: [String] { applied.withLock { $0 } }

    /// A call on `client` found the database unreachable: the store is down
    /// (if `client` is still its pool) and recovery starts.
    func failed(_ client: PostgresClient, reason: String) {
        let dropped: Task<Void, Never>? = state.withLock { state in
            guard case .up(let current, let running) = state, current === client else { return nil }
            state = .down(reason: reason)
            return running
        }
        guard let dropped else { return }
        logger.error("PostgreSQL store unavailable (\(configuration)): \(reason); reconnecting")
        dropped.cancel()
        startRecovery()
    }

    /// Whether the database answers a connection of the store's own (not the
    /// pool's) within two seconds: tells a lost database from a busy pool.
    func databaseAnswers() async -> Bool {
        do {
            let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 2, logger: logger)
            defer { Task { try? await connection.close() } }
            return try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    _ = try await connection.rows(SQL.Probe.self, logger: self.logger)
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(2))
                    // Closing fails a SELECT that hangs (a statement sent is
                    // not cancelled otherwise), so the probe never waits longer.
                    try? await connection.close()
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
        } catch {
            return false
        }
    }

    /// Refuses every call from now on, for `reason`, and drops the pool.
    func refuse(reason: String) {
        let dropped: Task<Void, Never>? = state.withLock { state in
            if case .closed = state { return nil }
            defer { state = .refused(reason: reason) }
            if case .up(_, let running) = state { return running }
            return nil
        }
        recovery.withLock { $0 }?.cancel()
        dropped?.cancel()
    }

    /// Stops the pool and any recovery; every call fails from now on.
    func close() async {
        let running: Task<Void, Never>? = state.withLock { state in
            defer { state = .closed }
            if case .up(_, let running) = state { return running }
            return nil
        }
        recovery.withLock { $0 }?.cancel()
        running?.cancel()
        await running?.value
    }

    /// Detached, as is the pool's run: a task inherits its creator's task
    /// locals, graceful shutdown among them, and the pool must live as long
    /// as the store, not end when the service of the call that found the
    /// database gone (an HTTP request's) begins to stop.
    private func startRecovery() {
        recovery.withLock { task in
            task = Task.detached { await self.recover() }
        }
    }

    private func recover() async {
        var wait = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let names = try await migrateOnOwnConnection()
                applied.withLock { $0 = names }
                let client = PostgresClient(configuration: try poolConfiguration(), backgroundLogger: logger)
                let running = Task.detached { await client.run() }
                let closed = state.withLock { state -> Bool in
                    switch state {
                    case .closed, .refused: return true
                    default:
                        state = .up(client, running)
                        return false
                    }
                }
                if closed {
                    running.cancel()
                } else {
                    logger.info("PostgreSQL store ready: \(configuration), \(names.count) migrations applied")
                }
                return
            } catch let mismatch as KeyMismatch {
                logger.critical("\(mismatch)")
                refuse(reason: mismatch.description)
                return
            } catch {
                let reason = PostgresCheckoutStore.reason(error)
                let closed = state.withLock { state -> Bool in
                    switch state {
                    case .closed, .refused: return true
                    default:
                        state = .down(reason: reason)
                        return false
                    }
                }
                if closed { return }
                logger.warning("PostgreSQL store not ready (\(configuration)): \(reason); trying again in \(wait)")
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, .seconds(2))
            }
        }
    }

    /// Opens a connection of its own, creates the schema if need be, applies
    /// the migrations it lacks, and closes it.
    private func migrateOnOwnConnection() async throws -> [String] {
        let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 0, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \"\(configuration.schema)\""), logger: logger)
            let names = try await PostgresMigrations.migrate(connection, schema: configuration.schema, logger: logger)
            if let check = keyCheck.withLock({ $0 }) { try await Self.agree(on: check, connection, logger: logger) }
            try await connection.close()
            return names
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A connection of its own (not the pool's): for migrations, for
    /// listening (``EventListener``), and for each batch lane (``LaneConnection``).
    /// - Parameter role: after "gateway" in `application_name`, for a
    ///   connection with a role of its own (`pg_stat_activity` tells them apart).
    func connectionConfiguration(role: String? = nil) throws -> PostgresConnection.Configuration {
        var options = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: try connectionTLS())
        options.options.connectTimeout = .seconds(2)
        options.options.additionalStartupParameters = startupParameters(role: role)
        return options
    }

    private func startupParameters(role: String? = nil) -> [(String, String)] {
        [("search_path", "\"\(configuration.schema)\""), ("application_name", role.map { "gateway \($0)" } ?? "gateway")]
    }

    /// What TLS checks (``PostgresConfiguration/TLSMode``): nothing of the
    /// certificate for `prefer` and `require`, as libpq; the chain and the
    /// host name for `verify-full`, against `sslrootcert` when given.
    private func tlsConfiguration() -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch configuration.tls {
        case .verifyFull:
            if let roots = configuration.rootCertificate { tls.trustRoots = .file(roots) }
        default:
            tls.certificateVerification = .none
        }
        return tls
    }

    private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        switch configuration.tls {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: tlsConfiguration()))
        case .require, .verifyFull: .require(try NIOSSLContext(configuration: tlsConfiguration()))
        }
    }

    private func poolConfiguration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch configuration.tls {
        case .disable: .disable
        case .prefer: .prefer(tlsConfiguration())
        case .require, .verifyFull: .require(tlsConfiguration())
        }
        var options = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls)
        options.options.maximumConnections = configuration.poolSize
        options.options.connectTimeout = configuration.callTimeout
        options.options.additionalStartupParameters = startupParameters()
        return options
    }
}
