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
///   found it out with its keep-alive), nor once closed, nor after any
///   failure of a batch on it (even the server refusing a statement: the
///   driver keeps a failed preparation for the connection's life, and would
///   fail every later batch with it): it is closed and the next batch opens
///   another.
/// - When it cannot be opened, ``run(for:_:)`` says so (``CannotOpen``)
///   without running anything, and the store runs that batch on a pooled
///   connection instead: whether the database is there is the pool's to
///   find out, as for any call. The next tries wait 250 ms, doubling to
///   30 s, so a lane that cannot connect (too many connections) costs its
///   batches no time. The log says so when opening starts failing, and when
///   it opens again; not for every batch between.
/// - One batch at a time: the lane is the only user, and a second caller
///   while a batch runs is refused (two transactions on one connection
///   would interleave).
final class LaneConnection: Sendable {
    /// Its part, for logs and `application_name` ("commits").
    let role: String
    /// How long the connection may sit unused and still be trusted (the
    /// pool's keep-alive checks an idle connection every 30 s).
    let idleLimit: Duration
    private let firstRetry: Duration

    private struct Open {
        /// The pool it was opened beside (held: compared by identity, never a reused address).
        var pool: PostgresClient
        var connection: PostgresConnection
        var lastUsed: ContinuousClock.Instant
    }

    /// Why the last open failed, and when to try again (the wait doubling).
    private struct Failing {
        var reason: String
        var wait: Duration
        var retryAfter: ContinuousClock.Instant
    }

    private struct State {
        var open: Open?
        var busy = false
        var closed = false
        var opened = 0
        /// Since an open failed, until one succeeds (said once each way in the log).
        var failing: Failing?
    }

    private let state = Mutex(State())
    private let configuration: @Sendable () throws -> PostgresConnection.Configuration
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: how to open the connection (the store's own: its
    ///     host, credentials, TLS, schema and connect timeout).
    ///   - firstRetry: the wait after a first failed open (doubling to 30 s).
    init(role: String, configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration, logger: Logger,
         idleLimit: Duration = .seconds(30), firstRetry: Duration = .milliseconds(250)) {
        self.role = role
        self.configuration = configuration
        self.logger = logger
        self.idleLimit = idleLimit
        self.firstRetry = firstRetry
    }

    deinit {
        // Closed, not dropped open (the driver requires it): the task keeps it until then.
        if let open = state.withLock({ $0.open }) { Self.closeInBackground(open.connection) }
    }

    /// Connections opened so far (for tests: one under a steady load).
    var connectionsOpened: Int { state.withLock { $0.opened } }

    /// Runs `body` on the lane's connection for `pool`, opened first when
    /// there is none it can trust; ``CannotOpen`` (nothing run) when it could
    /// not be opened, now or lately.
    func run<T: Sendable>(for pool: PostgresClient, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let (kept, stale, waiting): (PostgresConnection?, PostgresConnection?, String?) = try state.withLock { state in
            guard !state.closed else { throw StoreUnavailable("the store is closed") }
            guard !state.busy else { throw LaneBusy(role: role) }
            var stale: PostgresConnection?
            if let open = state.open {
                if open.pool === pool, !open.connection.isClosed, ContinuousClock.now - open.lastUsed < idleLimit {
                    state.busy = true
                    return (open.connection, nil, nil)
                }
                state.open = nil
                stale = open.connection
            }
            if let failing = state.failing, ContinuousClock.now < failing.retryAfter { return (nil, stale, failing.reason) }
            state.busy = true
            return (nil, stale, nil)
        }
        if let stale { Self.closeInBackground(stale) }
        if let waiting { throw CannotOpen(role: role, reason: waiting) }
        let connection: PostgresConnection
        if let kept {
            connection = kept
        } else {
            do {
                connection = try await open(for: pool)
            } catch {
                state.withLock { $0.busy = false }
                throw error
            }
        }
        do {
            let result = try await body(connection)
            state.withLock { state in
                state.busy = false
                if state.open?.connection === connection { state.open?.lastUsed = .now }
            }
            return result
        } catch {
            let dropped = state.withLock { state -> Bool in
                state.busy = false
                guard state.open?.connection === connection else { return false }
                state.open = nil
                return true
            }
            if dropped { Self.closeInBackground(connection) }
            throw error
        }
    }

    private func open(for pool: PostgresClient) async throws -> PostgresConnection {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try configuration(), id: 3, logger: logger)
        } catch {
            let reason = PostgresCheckoutStore.reason(error)
            let first = state.withLock { state -> Bool in
                let wait = state.failing.map { min($0.wait * 2, max(firstRetry, .seconds(30))) } ?? firstRetry
                defer { state.failing = Failing(reason: reason, wait: wait, retryAfter: .now + wait) }
                return state.failing == nil
            }
            let cannot = CannotOpen(role: role, reason: reason)
            if first { logger.warning("PostgreSQL store: \(cannot); its batches go through the pool until it opens") }
            throw cannot
        }
        let (closed, wasFailing) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (true, false) }
            state.opened += 1
            state.open = Open(pool: pool, connection: connection, lastUsed: .now)
            defer { state.failing = nil }
            return (false, state.failing != nil)
        }
        if closed {
            Self.closeInBackground(connection)
            throw StoreUnavailable("the store is closed")
        }
        if wasFailing { logger.notice("PostgreSQL store: the \(role) lane's connection is open again") }
        return connection
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

    private static func closeInBackground(_ connection: PostgresConnection) {
        Task { try? await connection.close() }
    }

    /// The lane's connection could not be opened (now, or lately: see
    /// ``run(for:_:)``); nothing was run.
    struct CannotOpen: Error, CustomStringConvertible {
        var role: String
        var reason: String
        var description: String { "the \(role) lane's connection could not be opened: \(reason)" }
    }

    /// A second batch asked for the lane's connection while one ran on it (a bug).
    struct LaneBusy: Error, CustomStringConvertible {
        var role: String
        var description: String { "the \(role) lane's connection was asked for by a second batch while one ran on it" }
    }
}
