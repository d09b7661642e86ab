import CheckoutEngine
import Logging
import PostgresNIO
import Synchronization

/// A connection of one batch lane's own, kept from one batch to the next:
/// the commit lane's (``PostgresCheckoutStore``).
///
/// Under load the lane runs its batches back to back. Taking a pooled
/// connection for each and giving it back cost the host more than the
/// batch's own work there: the pool's bookkeeping, the keep-alive timer it
/// arms for a connection given back and cancels at the next lease, a task
/// to bound the wait. Kept, the lane's connection costs none of it
/// (BENCHMARKS.md: 10% more payments per second on PostgreSQL).
///
/// - It belongs to the pool it was opened beside (a `PostgresClient`): once
///   the store has a new pool (the database was away), the lane opens a new
///   connection too, on the schema that pool's recovery migrated.
/// - It is not trusted after ``idleLimit`` unused (a connection a network
///   dropped silently would hang the next batch, where the pool would have
///   found it out with its keep-alive), nor once closed, nor after an error
///   other than a statement's own (the server refusing a statement leaves
///   the connection as it was; anything else may not have): it is closed
///   and the next batch opens another.
/// - One batch at a time: the lane is the only user, and a second caller
///   while a batch runs is refused (two transactions on one connection
///   would interleave).
final class LaneConnection: Sendable {
    /// How long the connection may sit unused and still be trusted (the
    /// pool's keep-alive checks an idle connection every 30 s).
    let idleLimit: Duration

    private struct Open {
        var pool: ObjectIdentifier
        var connection: PostgresConnection
        var lastUsed: ContinuousClock.Instant
    }

    private struct State {
        var open: Open?
        var busy = false
        var closed = false
        var opened = 0
    }

    private let state = Mutex(State())
    private let configuration: @Sendable () throws -> PostgresConnection.Configuration
    private let logger: Logger

    /// - Parameter configuration: how to open the connection (the store's
    ///   own: its host, credentials, TLS and schema).
    init(configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration, logger: Logger,
         idleLimit: Duration = .seconds(30)) {
        self.configuration = configuration
        self.logger = logger
        self.idleLimit = idleLimit
    }

    /// Connections opened so far (for tests: one under a steady load).
    var connectionsOpened: Int { state.withLock { $0.opened } }

    /// Runs `body` on the lane's connection for `pool`, opened first when
    /// there is none it can trust.
    func run<T: Sendable>(for pool: PostgresClient, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let (kept, stale): (PostgresConnection?, PostgresConnection?) = try state.withLock { state in
            guard !state.closed else { throw StoreUnavailable("the store is closed") }
            guard !state.busy else { throw LaneBusy() }
            state.busy = true
            guard let open = state.open else { return (nil, nil) }
            if open.pool == ObjectIdentifier(pool), !open.connection.isClosed, ContinuousClock.now - open.lastUsed < idleLimit {
                return (open.connection, nil)
            }
            state.open = nil
            return (nil, open.connection)
        }
        defer { state.withLock { $0.busy = false } }
        if let stale { Self.closeInBackground(stale) }
        let connection: PostgresConnection
        if let kept {
            connection = kept
        } else {
            connection = try await PostgresConnection.connect(configuration: try configuration(), id: 3, logger: logger)
            let closed = state.withLock { state -> Bool in
                guard !state.closed else { return true }
                state.opened += 1
                state.open = Open(pool: ObjectIdentifier(pool), connection: connection, lastUsed: .now)
                return false
            }
            if closed {
                Self.closeInBackground(connection)
                throw StoreUnavailable("the store is closed")
            }
        }
        do {
            let result = try await body(connection)
            state.withLock { state in
                if state.open?.connection === connection { state.open?.lastUsed = .now }
            }
            return result
        } catch {
            if !Self.leavesConnectionAsItWas(error) { drop(connection) }
            throw error
        }
    }

    /// Closes the connection; every later ``run(for:_:)`` fails.
    func close() async {
        let open = state.withLock { state -> PostgresConnection? in
            state.closed = true
            defer { state.open = nil }
            return state.open?.connection
        }
        try? await open?.close()
    }

    private func drop(_ connection: PostgresConnection) {
        let dropped = state.withLock { state -> Bool in
            guard state.open?.connection === connection else { return false }
            state.open = nil
            return true
        }
        if dropped { Self.closeInBackground(connection) }
    }

    private static func closeInBackground(_ connection: PostgresConnection) {
        Task { try? await connection.close() }
    }

    /// Whether the connection is as it was before the call that failed with
    /// `error`: only when the server refused a statement (its transaction is
    /// undone by the caller's ROLLBACK, or ended by COMMIT).
    static func leavesConnectionAsItWas(_ error: any Error) -> Bool {
        (error as? PSQLError)?.code == .server
    }

    /// A second batch asked for the lane's connection while one ran on it (a bug).
    struct LaneBusy: Error, CustomStringConvertible {
        var description: String { "the commit lane's connection was asked for by a second batch while one ran on it" }
    }
}
