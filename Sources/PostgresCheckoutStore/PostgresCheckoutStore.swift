import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PostgresNIO
import Synchronization

/// The engine's store on PostgreSQL, for several hosts sharing one database.
///
/// - Every guarantee of ``CheckoutStore`` holds across hosts because the
///   database enforces it, not the process: a commit is one transaction whose
///   session `UPDATE … WHERE version = read` matches no row when another host
///   committed first (``StoreConflict/staleSession(id:expected:)``); an
///   idempotency key is a primary key written by an upsert that refuses
///   another request's fingerprint; a session's events are numbered from
///   the count its row returns, under the row's lock.
/// - Reconciliation work is claimed (``claimDueAttempts(at:limit:claimant:until:)``,
///   `FOR UPDATE SKIP LOCKED`), so each due check runs on one host.
/// - Every statement is prepared once per connection (``SQL``): the pool's,
///   and the one each batch lane keeps (``LaneConnection``).
/// - The store starts without the database: its pool connects in the
///   background, its migrations (``PostgresMigrations``) run as soon as the
///   database answers, and until then, or while the database is away, every
///   call fails fast with ``CheckoutEngine/StoreUnavailable`` after at most
///   the configured deadline; the pool reconnects by itself.
/// - Each commit tells listening hosts of its session's new events
///   (`NOTIFY gateway_events`, sent when the transaction commits): see
///   ``committedEvents()``.
public final class PostgresCheckoutStore: CheckoutStore, APIKeyStore, CommittedEventFeed, SharedFingerprintKey, Sendable {
    public let configuration: PostgresConfiguration
    let logger: Logger
    private let pool: PoolKeeper
    private let listener: EventListener
    /// Each batch lane's own connection, kept across its batches.
    private let commitLane: LaneConnection
    private let answersLane: LaneConnection
    private let versionsLane: LaneConnection
    /// Commits, keys' answers and sessions' versions asked at the same time
    /// each go in one round trip (``Batcher``): what a payment costs the
    /// database is mostly its round trips.
    private let commits: Batcher<PostgresChange, [SessionEvent]>
    private let answers: Batcher<String, IdempotentAnswer?>
    private let versions: Batcher<String, Int?>
    /// Every call's deadline (``bounded``, and the batches' queues), on one timer.
    private let deadlines = Deadlines()
    /// How long writing a refused batch's changes one by one may hold the
    /// commit lane in all (the call deadline; tests set less).
    let fallbackBudget: Duration

    /// Makes the store and starts connecting; it never waits for the
    /// database (see ``PoolKeeper``). Call ``close()`` when done with it.
    public convenience init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "gateway.postgres")) {
        self.init(configuration: configuration, logger: logger, fallbackBudget: configuration.callTimeout)
    }

    /// - Parameter lanesConnect: how the batch lanes open their connections
    ///   (tests: to a place where none can be opened).
    init(configuration: PostgresConfiguration, logger: Logger, fallbackBudget: Duration,
         lanesConnect: @escaping @Sendable (PostgresConnection.Configuration) -> PostgresConnection.Configuration = { $0 }) {
        self.configuration = configuration
        self.fallbackBudget = fallbackBudget
        self.logger = logger
        let pool = PoolKeeper(configuration: configuration, logger: logger)
        self.pool = pool
        listener = EventListener(connect: { try pool.connectionConfiguration() }, logger: logger)
        func lane(_ role: String) -> LaneConnection {
            LaneConnection(role: role, configuration: {
                var options = try pool.connectionConfiguration(role: role)
                options.options.connectTimeout = .nanoseconds(configuration.callTimeout.nanoseconds)   // as the pool's
                return lanesConnect(options)
            }, logger: logger)
        }
        commitLane = lane("commits")
        answersLane = lane("answers")
        versionsLane = lane("versions")
        // One batch of each kind at a time: the fewest round trips, and the
        // least CPU per payment on both sides (BENCHMARKS.md measured one and
        // two lanes: two gave no more payments per second, for about a fifth
        // more CPU). A batch grows with the calls made while the one before
        // it runs, so a slower database gets larger batches, not a queue.
        commits = Batcher(lanes: 1, largest: Self.largestCommitBatch, deadlines: deadlines)
        answers = Batcher(lanes: 1, largest: 256, deadlines: deadlines)
        versions = Batcher(lanes: 1, largest: 256, deadlines: deadlines)
    }

    /// What the store is doing now, for a log (a shutdown that is slow, an
    /// operator's question): the pool's state and each batch queue.
    public var activity: String? {
        "pool \(pool.isUp ? "up" : "down"); commits \(commits.load); idempotency answers \(answers.load); versions \(versions.load)"
    }

    /// Changes in one batch at most. Each is written in a subtransaction of
    /// its own (so a refused one costs the others nothing), and PostgreSQL
    /// caches 64 subtransactions per transaction (`PGPROC_MAX_CACHED_SUBXIDS`):
    /// past that, every other session's snapshot has to look subtransactions
    /// up on disk (`pg_subtrans`), slowing the whole database. Never above 64.
    static let largestCommitBatch = 64

    /// Stops the pool, its reconnecting and its listening; calls fail from now on.
    public func close() async {
        await listener.close()
        // The pool first: a batch whose lane closes under it then fails
        // without starting a recovery.
        await pool.close()
        for lane in [commitLane, answersLane, versionsLane] { await lane.close() }
    }

    /// The engine's fingerprint key check: agreed with the database before
    /// any call of this store goes on (here when the store is up already;
    /// else by the recovery that brings it up, and again at every
    /// reconnection). A host whose check differs serves nothing.
    public func expectFingerprintKey(check: String) {
        pool.expectKeyCheck(check)
        let pool = self.pool, logger = self.logger
        let agreement = Task {
            guard let client = try? pool.client() else { return }   // down: the recovery agrees first
            do {
                try await client.withConnection { try await PoolKeeper.agree(on: check, $0, logger: logger) }
            } catch let mismatch as PoolKeeper.KeyMismatch {
                logger.critical("\(mismatch)")
                pool.refuse(reason: mismatch.description)
                throw StoreUnavailable(mismatch.description)
            } catch {
                // Not a mismatch (the database went away meanwhile): the
                // recovery that brings the pool back agrees before it is up.
                pool.failed(client, reason: Self.reason(error))
            }
        }
        keyAgreement.withLock { $0 = agreement }
    }

    /// The check's agreement while it runs (every call waits for it), or once
    /// it failed; nil once a call has seen it succeed.
    private let keyAgreement = Mutex<Task<Void, any Error>?>(nil)

    /// Every host's commits, as they commit (see ``EventListener``).
    public func committedEvents() -> AsyncStream<CommittedEvents> {
        listener.notices()
    }

    /// Waits until the database answers and its schema is migrated, or
    /// throws ``CheckoutEngine/StoreUnavailable`` with what it last answered
    /// after `timeout`: for commands that need the store at once
    /// (`gateway keys`). Answers the migrations applied, in order.
    public func ready(within timeout: Duration) async throws -> [String] {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while !pool.isUp, clock.now < end {
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = try pool.client()
        return pool.migrations
    }

    /// Whether the database answered the last call (and the schema is migrated).
    public var isAvailable: Bool { pool.isUp }

    // MARK: Calls with a deadline

    /// Runs `body` on a pooled connection within the configured deadline.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        try await keyAgreed()
        let client = try pool.client()
        let logger = self.logger
        return try await bounded(client) { try await client.withConnection { try await body($0, logger) } }
    }

    /// Runs `body` on a batch lane's own connection (``LaneConnection``),
    /// opened beside the current pool; on a pooled connection instead when
    /// the lane's cannot be opened (the pool then finds out whether the
    /// database is there). No wait for a pooled connection on the lane, so
    /// none to bound; a failure means what it means to any call
    /// (``failure(_:of:inTime:)``), late when it came after the deadline.
    func on<T: Sendable>(_ lane: LaneConnection, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        try await keyAgreed()
        let client = try pool.client()
        let started = ContinuousClock.now
        do {
            return try await lane.run(for: client) { try await body($0, logger) }
        } catch is LaneConnection.CannotOpen {
            return try await withConnection(body)
        } catch {
            throw await failure(error, of: client, inTime: ContinuousClock.now - started <= configuration.callTimeout)
        }
    }

    /// Waits for the fingerprint key's agreement while it runs; throws if it failed.
    private func keyAgreed() async throws {
        if let agreement = keyAgreement.withLock({ $0 }) {
            try await agreement.value
            // Agreed: later calls go straight on (a failed agreement stays, and refuses every call).
            keyAgreement.withLock { if $0 == agreement { $0 = nil } }
        }
    }

    /// `operation`, or ``CheckoutEngine/StoreUnavailable`` once the deadline
    /// passes. A deadline cancels the wait for a connection; a statement
    /// already sent is waited for, and its result, if it comes, is the answer
    /// (a commit that succeeded is never reported as failed).
    private func bounded<T: Sendable>(_ client: PostgresClient, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = Task { try await operation() }
        let deadline = deadlines.add(after: configuration.callTimeout) { work.cancel() }
        let result = await withTaskCancellationHandler { await work.result } onCancel: { work.cancel() }
        let inTime = deadlines.remove(deadline)
        do {
            return try result.get()
        } catch {
            throw await failure(error, of: client, inTime: inTime)
        }
    }

    /// What a call's `error` on `client` tells its caller, and what it tells
    /// the store: the database gone (the pool is dropped and recovery starts)
    /// or not. `inTime`: the error came before the call's deadline.
    private func failure(_ error: any Error, of client: PostgresClient, inTime: Bool) async -> any Error {
        if !inTime, !(error is StoreConflict) {
            // No answer in time: a database gone, a pool whose every
            // connection is busy, or a statement waiting on a lock. Only the
            // first drops the pool: a connection of the store's own asks the
            // database directly.
            let reason = "no answer within \(configuration.callTimeout): \(Self.reason(error))"
            if Task.isCancelled { return StoreUnavailable(reason) }
            if await pool.databaseAnswers() {
                return StoreUnavailable(reason + " (the database answers: every pooled connection was busy, or a statement waited on a lock; a larger pool= or timeout= may be needed)")
            }
            pool.failed(client, reason: reason)
            return StoreUnavailable(reason)
        }
        // The caller's own cancellation (a client gone, a shutdown) ended
        // the call: it says nothing about the database, and the caller
        // hears it as a call that did not get through.
        if Task.isCancelled, !(error is StoreConflict) {
            return error as? StoreUnavailable
                ?? StoreUnavailable("the call was cancelled by its caller before the database answered: \(Self.reason(error))")
        }
        if !Self.isUnavailability(error) { return Self.described(error) }
        let unavailable = error as? StoreUnavailable ?? StoreUnavailable(Self.reason(error))
        pool.failed(client, reason: unavailable.reason)
        return unavailable
    }

    /// Whether `error` says the database cannot be reached now (rather than
    /// that a statement was wrong).
    static func isUnavailability(_ error: any Error) -> Bool {
        if error is StoreUnavailable { return true }
        if error is StoreConflict { return false }
        if let error = error as? PSQLError {
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
                 .sslUnsupported, .failedToAddSSLHandler:
                return true
            case .server:
                // 08: connection exceptions; 57P01-57P03: shut down or starting;
                // 53300: too many connections; 3D000: no such database.
                let state = error.serverInfo?[.sqlState] ?? ""
                return state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "3D000" || state == "28P01"
            default:
                return false
            }
        }
        // The pool's own errors (connection creation failing, its circuit
        // breaker open) come from its module, unnamed here.
        return String(reflecting: type(of: error)).contains("ConnectionPoolError")
    }

    /// Whether `error` is the server refusing a statement (its transaction
    /// undone: nothing of it written), as a deadlock or a constraint is, and
    /// not the database going away.
    static func refusedWhole(_ error: any Error) -> Bool {
        let error = error as? PSQLError ?? (error as? PostgresStoreError)?.underlying as? PSQLError
        guard let error, error.code == .server, error.serverInfo?[.sqlState] != nil else { return false }
        return !isUnavailability(error)   // which counts class 08 (connection exceptions) as unavailability
    }

    /// What went wrong, for a log or a problem's detail: PostgreSQL's own
    /// message and SQLSTATE when it sent one. Never a password (the pool
    /// never puts one in an error).
    static func reason(_ error: any Error) -> String {
        if let unavailable = error as? StoreUnavailable { return unavailable.reason }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "PostgreSQL: \(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            return "PostgreSQL connection: \(error.code)"
        }
        if let error = error as? PostgresDecodingError {
            return "PostgreSQL answer unreadable: column \(error.columnName) (\(error.postgresType)) as \(error.targetType): \(error.code)"
        }
        return String(describing: error)
    }

    /// The driver's errors as ``PostgresStoreError``, which says what went
    /// wrong (their own description hides it); any other error as it is.
    static func described(_ error: any Error) -> any Error {
        guard error is PSQLError || error is PostgresDecodingError else { return error }
        return PostgresStoreError(description: reason(error), sqlState: (error as? PSQLError)?.serverInfo?[.sqlState], underlying: error)
    }

    // MARK: CheckoutStore

    public func commit(_ change: StoreChange) async throws -> [SessionEvent] {
        try await batched(commits, PostgresChange(change)) { changes in await self.write(changes) }
    }

    /// `item`'s answer through `batcher`, within the call deadline: a call
    /// that waited past it behind a batch that has not ended is the database
    /// unavailable to it (503 and Retry-After to the caller; nothing of it
    /// was sent).
    private func batched<Item, Answer>(_ batcher: Batcher<Item, Answer>, _ item: Item,
                                       run: @escaping Batcher<Item, Answer>.Run) async throws -> Answer {
        do {
            return try await batcher.submit(item, deadline: configuration.callTimeout, run: run)
        } catch let late as BatchQueuedPastDeadline {
            logger.warning("PostgreSQL store: \(late)")
            throw StoreUnavailable("\(late)")
        }
    }

    /// Writes `changes` as one batch (what ``commit(_:)`` gathers), each
    /// with its own outcome.
    func commit(batch changes: [StoreChange]) async -> [Result<[SessionEvent], any Error>] {
        await write(changes.map(PostgresChange.init))
    }

    /// Writes a batch of changes in one transaction, in the order of their
    /// sessions' ids (every host's batches lock sessions in one order, so
    /// two of them never wait for each other on two sessions; a change's
    /// order among those of its own session is kept). When the batch fails
    /// as a whole for another reason than the database being away (such as
    /// a deadlock with another host's batch on idempotency keys, which
    /// PostgreSQL breaks by undoing one of them), each change is written
    /// again on its own, so that each gets its own outcome.
    private func write(_ submitted: [PostgresChange]) async -> [Result<[SessionEvent], any Error>] {
        let order = submitted.indices.sorted { (submitted[$0].sessionID ?? "", $0) < (submitted[$1].sessionID ?? "", $1) }
        let outcomes = await writeInOrder(order.map { submitted[$0] })
        // Back in the order submitted.
        return zip(order, outcomes).sorted { $0.0 < $1.0 }.map(\.1)
    }

    private func writeInOrder(_ changes: [PostgresChange]) async -> [Result<[SessionEvent], any Error>] {
        do {
            return try await on(commitLane) { connection, logger in try await PostgresChange.write(changes, connection, logger: logger) }
        } catch {
            // Only a statement the server refused is known to have written
            // nothing; anything else (the connection lost, an answer that
            // could not be read) may have committed, and writing again would
            // report a committed change as refused.
            guard changes.count > 1, Self.refusedWhole(error) else { return changes.map { _ in .failure(error) } }
            logger.notice("PostgreSQL store: a batch of \(changes.count) commits failed (\(Self.reason(error))); each is written on its own")
            // One at a time in the lane, so within one call's deadline in
            // all: the changes not reached by then are not written, and say
            // so (the lane is not held for a deadline per change).
            let budget = fallbackBudget
            let end = ContinuousClock.now + budget
            var outcomes: [Result<[SessionEvent], any Error>] = []
            for change in changes {
                guard ContinuousClock.now < end else {
                    outcomes.append(.failure(StoreUnavailable(
                        "its batch was refused whole and writing its changes one by one took longer than \(budget); this one was not written")))
                    continue
                }
                do {
                    outcomes += try await on(commitLane) { connection, logger in try await PostgresChange.write([change], connection, logger: logger) }
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            return outcomes
        }
    }

    public func session(_ id: String) async throws -> Session? {
        let document: Data? = try await withConnection { connection, logger in
            try await connection.rows(SQL.SessionDocument.self, .text(id), logger: logger).first?.decode(Data.self)
        }
        return try document.map { try DocumentCoding.decode(Session.self, from: $0) }
    }

    public func sessionVersion(_ id: String) async throws -> Int? {
        try await batched(versions, id) { ids in await self.versions(ofSessions: ids) }
    }

    private func versions(ofSessions ids: [String]) async -> [Result<Int?, any Error>] {
        await lookUp(ids, SQL.SessionVersions.self, on: versionsLane) { row in
            let (id, version) = try row.decode((String, Int64).self)
            return (id, Int(version))
        }
    }

    /// One statement for many keys (`= ANY($1)`, answering each found row's
    /// key and value): each key's value, or nil; or the statement's error for
    /// every key.
    private func lookUp<Text: StatementText, Value: Sendable>(
        _ keys: [String], _ statement: Text.Type, on lane: LaneConnection, _ decode: @escaping @Sendable (PostgresRow) throws -> (String, Value)
    ) async -> [Result<Value?, any Error>] {
        do {
            let found = try await on(lane) { connection, logger in
                var found: [String: Value] = [:]
                for row in try await connection.rows(statement, .texts(keys), logger: logger) {
                    let (key, value) = try decode(row)
                    found[key] = value
                }
                return found
            }
            // Found under the key as stored (StoredText).
            return keys.map { .success(found[StoredText.storable($0)]) }
        } catch {
            return keys.map { _ in .failure(error) }
        }
    }

    public func sessionID(ofAttempt attemptID: String) async throws -> String? {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.SessionOfAttempt.self, .text(attemptID), logger: logger).first?.decode(String.self)
        }
    }

    public func attempt(ofProvider provider: String, holding reference: String) async throws -> String? {
        try await withConnection { connection, logger in
            // Looked for as commits store it (StoredText), as SQLite's lookup does.
            try await connection.rows(SQL.AttemptHoldingReference.self, .text(provider), .text(StoredText.storable(reference)), logger: logger)
                .first?.decode(String.self)
        }
    }

    public func answer(forKey key: String) async throws -> IdempotentAnswer? {
        try await batched(answers, key) { keys in await self.answers(forKeys: keys) }
    }

    private func answers(forKeys keys: [String]) async -> [Result<IdempotentAnswer?, any Error>] {
        await lookUp(keys, SQL.Answers.self, on: answersLane) { row in
            let (key, fingerprint, body, reference, created) = try row.decode((String, String, Data?, String?, Double).self)
            return (key, IdempotentAnswer(key: key, fingerprint: fingerprint, body: body, reference: reference,
                                          createdAt: Date(timeIntervalSince1970: created)))
        }
    }

    public func events(ofSession id: String, after: Int64) async throws -> [SessionEvent] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.Events.self, .text(id), .int(after), logger: logger).map(Self.event(from:))
        }
    }

    static func event(from row: PostgresRow) throws -> SessionEvent {
        let (number, session, at, type, attempt, status, provider, amount, currency, detail) =
            try row.decode((Int64, String, Double, String, String?, String?, String?, Int64?, String?, String?).self)
        var event = SessionEvent(
            sessionID: session, at: Date(timeIntervalSince1970: at), type: SessionEvent.Kind(rawValue: type), attemptID: attempt, status: status,
            providerID: provider, amount: amount.flatMap { value in currency.map { Money(value: value, currency: $0) } }, detail: detail)
        event.sequence = number
        return event
    }

    public func dueAttempts(at now: Date, limit: Int) async throws -> [AttemptRef] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.DueAttempts.self, .float(now.timeIntervalSince1970), .int(Int64(limit)), logger: logger).map {
                let (id, session) = try $0.decode((String, String).self)
                return AttemptRef(sessionID: session, attemptID: id)
            }
        }
    }

    public func claimDueAttempts(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [AttemptRef] {
        // One statement (its own transaction): the rows it claims are locked
        // from its SELECT to its end, and skipped by every other claim.
        let claimed = try await withConnection { connection, logger in
            try await connection.rows(
                SQL.ClaimDueAttempts.self, .float(now.timeIntervalSince1970), .int(Int64(limit)), .text(claimant),
                .float(until.timeIntervalSince1970), logger: logger
            ).map { row in
                let (id, session, due) = try row.decode((String, String, Double).self)
                return (due, AttemptRef(sessionID: session, attemptID: id))
            }
        }
        // UPDATE … RETURNING answers in no particular order: oldest due first.
        return claimed.sorted { ($0.0, $0.1.attemptID) < ($1.0, $1.1.attemptID) }.map(\.1)
    }

    public func heldPayments(limit: Int) async throws -> [AttemptRef] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.HeldPayments.self, .int(Int64(limit)), logger: logger).map {
                let (id, session) = try $0.decode((String, String).self)
                return AttemptRef(sessionID: session, attemptID: id)
            }
        }
    }

    public func expiredSessions(at now: Date, limit: Int) async throws -> [String] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.ExpiredSessions.self, .float(now.timeIntervalSince1970), .int(Int64(limit)), logger: logger)
                .map { try $0.decode(String.self) }
        }
    }

    public func hasWebhook(provider: String, eventID: String) async throws -> Bool {
        try await withConnection { connection, logger in
            try await !connection.rows(SQL.WebhookSeen.self, .text(provider), .text(eventID), logger: logger).isEmpty
        }
    }

    // MARK: APIKeyStore

    public func createAPIKey(_ key: APIKeyRecord) async throws {
        try await withConnection { connection, logger in
            _ = try await connection.rows(
                SQL.InsertAPIKey.self, .text(key.id), .text(key.name), .text(key.mode.rawValue), .text(key.hash), .text(key.prefix),
                .float(key.createdAt.timeIntervalSince1970), .float(key.revokedAt?.timeIntervalSince1970), logger: logger)
        }
    }

    public func apiKey(hash: String) async throws -> APIKeyRecord? {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.APIKeyByHash.self, .text(hash), logger: logger).first.map(Self.apiKey(from:))
        }
    }

    public func apiKeys() async throws -> [APIKeyRecord] {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.APIKeys.self, logger: logger).map(Self.apiKey(from:))
        }
    }

    public func revokeAPIKey(id: String, at: Date) async throws -> APIKeyRecord? {
        try await withConnection { connection, logger in
            try await connection.rows(SQL.RevokeAPIKey.self, .text(id), .float(at.timeIntervalSince1970), logger: logger)
                .first.map(Self.apiKey(from:))
        }
    }

    /// A row as a key. The table's CHECK admits only the two modes; a row
    /// with another is an error, never a key of some mode.
    private static func apiKey(from row: PostgresRow) throws -> APIKeyRecord {
        let (id, name, stored, hash, prefix, created, revoked) = try row.decode((String, String?, String, String, String, Double, Double?).self)
        guard let mode = PaymentMode(rawValue: stored) else {
            throw StoredDataError(description: "API key \(id) has no valid mode (\(stored.prefix(16)))")
        }
        return APIKeyRecord(id: id, name: name, mode: mode, hash: hash, prefix: prefix,
                            createdAt: Date(timeIntervalSince1970: created), revokedAt: revoked.map(Date.init(timeIntervalSince1970:)))
    }
}

/// A row the store cannot read as what it should be.
struct StoredDataError: Error, CustomStringConvertible {
    var description: String
}
