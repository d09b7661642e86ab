import CheckoutEngine
import Foundation
import Logging
import PostgresNIO
@testable import PostgresCheckoutStore
import Synchronization
import TestSupport
import Testing

/// A batch lane keeps a connection of its own (``LaneConnection``): one
/// connection for every batch while it can be trusted, and a new one when
/// it cannot (another pool, a connection closed under it, an error that is
/// not a statement's own, too long unused).
@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"),
       .timeLimit(.minutes(TestTime.minutes(5))))
struct LaneConnectionTests {
    static func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let configuration = try #require(TestPostgres.configuration)
        var options = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        options.options.connectTimeout = .seconds(60)
        return options
    }

    /// The cluster's user and database on a port nothing listens on.
    static func unreachable() throws -> PostgresConnection.Configuration {
        let configuration = try #require(TestPostgres.configuration)
        return PostgresConnection.Configuration(
            host: "127.0.0.1", port: 1, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
    }

    /// A pool the lane belongs to (only its identity matters here: never run).
    static func pool() throws -> PostgresClient {
        let configuration = try #require(TestPostgres.configuration)
        return PostgresClient(configuration: .init(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable))
    }

    static func lane(idleLimit: Duration = .seconds(30)) throws -> LaneConnection {
        let options = try connectionConfiguration()
        return LaneConnection(role: "test", configuration: { options }, logger: Logger(label: "test.lane"), idleLimit: idleLimit)
    }

    static func backend(_ lane: LaneConnection, _ pool: PostgresClient) async throws -> Int32 {
        try await lane.run(for: pool) { connection in
            try await connection.query("SELECT pg_backend_pid()", logger: Logger(label: "test.lane")).collect().first!.decode(Int32.self)
        }
    }

    /// Whether the server still has backend `pid` (asked on a connection of the test's own).
    static func alive(_ pid: Int32) async throws -> Bool {
        let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 99, logger: Logger(label: "test.lane"))
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)", logger: Logger(label: "test.lane")).collect()
        return try rows.first!.decode(Int64.self) == 1
    }

    @Test func oneConnectionServesEveryBatchOfOnePool() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        var backends: Set<Int32> = []
        for _ in 0..<10 { backends.insert(try await Self.backend(lane, pool)) }
        #expect(backends.count == 1)
        #expect(lane.connectionsOpened == 1)
        await lane.close()
    }

    /// After the database was away the store has a new pool: its lane opens
    /// a new connection (on what that pool's recovery migrated), and closes
    /// the old one.
    @Test func aNewPoolGetsANewConnectionAndTheOldOneIsClosed() async throws {
        let lane = try Self.lane()
        let old = try Self.pool(), new = try Self.pool()
        let first = try await Self.backend(lane, old)
        let second = try await Self.backend(lane, new)
        #expect(first != second)
        #expect(lane.connectionsOpened == 2)
        #expect(try await waitUntil { (try? await Self.alive(first)) == false }, "the old pool's lane connection was left open")
        withExtendedLifetime(old) {}
        await lane.close()
    }

    /// Any failure of a batch, even the server refusing a statement (the
    /// driver keeps a failed preparation for a connection's life), and the
    /// lane does not trust the connection again: it is closed, and the next
    /// batch runs on a new one.
    @Test func aBatchThatFailsLeavesItsConnectionBehind() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        let first = try await Self.backend(lane, pool)
        await #expect(throws: PSQLError.self) {
            try await lane.run(for: pool) { try await $0.query("SELECT 1 / 0", logger: Logger(label: "test.lane")).collect() }
        }
        let second = try await Self.backend(lane, pool)
        #expect(second != first)
        struct Unreadable: Error {}
        await #expect(throws: Unreadable.self) {
            try await lane.run(for: pool) { _ in throw Unreadable() }
        }
        #expect(try await Self.backend(lane, pool) != second)
        #expect(lane.connectionsOpened == 3)
        let bothClosed = try await waitUntil {
            let firstClosed = (try? await Self.alive(first)) == false
            let secondClosed = (try? await Self.alive(second)) == false
            return firstClosed && secondClosed
        }
        #expect(bothClosed, "a connection not trusted was left open")
        await lane.close()
    }

    /// A lane that cannot open its connection says so without running the
    /// batch, and does not try again before its wait is over: the store runs
    /// those batches on pooled connections meanwhile.
    @Test func aLaneThatCannotOpenSaysSoWithoutRunningAndWaitsBeforeTryingAgain() async throws {
        let options = try Self.unreachable()
        let tries = Mutex(0)
        let lane = LaneConnection(role: "test", configuration: { tries.withLock { $0 += 1 }; return options },
                                  logger: Logger(label: "test.lane"), firstRetry: .seconds(3600))
        let pool = try Self.pool()
        let ran = Mutex(false)
        for _ in 0..<3 {
            await #expect(throws: LaneConnection.CannotOpen.self) {
                try await lane.run(for: pool) { _ in ran.withLock { $0 = true } }
            }
        }
        #expect(!ran.withLock { $0 })
        #expect(tries.withLock { $0 } == 1, "it tried again before its wait was over")
        await lane.close()
    }

    /// A connection the server closed (terminated, restarted) is replaced,
    /// not used: the batch after it runs on a new one.
    @Test func aConnectionClosedUnderTheLaneIsReplaced() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        let first = try await Self.backend(lane, pool)
        let admin = try await PostgresConnection.connect(configuration: try Self.connectionConfiguration(), id: 98, logger: Logger(label: "test.lane"))
        _ = try await admin.query("SELECT pg_terminate_backend(\(first))", logger: Logger(label: "test.lane")).collect()
        try? await admin.close()
        #expect(try await waitUntil { (try? await Self.alive(first)) == false })
        // The client sees the close when its event loop reads it: a batch in
        // between fails as on any lost connection; the next one must not.
        var answered: Int32?
        for _ in 0..<3 where answered == nil {
            do { answered = try await Self.backend(lane, pool) } catch let error as PSQLError {
                #expect(PostgresCheckoutStore.isUnavailability(error), "\(error)")
            }
        }
        let second = try #require(answered)
        #expect(second != first)
        await lane.close()
    }

    /// A store whose lanes cannot open a connection keeps serving: their
    /// batches go through the pool, and the store stays available.
    @Test func aStoreWhoseLanesCannotConnectCommitsAndReadsThroughItsPool() async throws {
        var configuration = try #require(TestPostgres.configuration)
        configuration.schema = TestPostgres.newSchema()
        configuration.callTimeout = .seconds(90)
        let unreachable = try Self.unreachable()
        let store = PostgresCheckoutStore(configuration: configuration, logger: Logger(label: "test.lane"), fallbackBudget: .seconds(90),
                                          lanesConnect: { _ in unreachable })
        _ = try await store.ready(within: .seconds(240))
        let session = try PostgresBatchTests.session("s1")
        _ = try await store.commit(StoreChange(session: session, events: [], answer: PostgresBatchTests.answer("k1", "f")))
        #expect(try await store.sessionVersion("s1") == 1)
        #expect(try await store.answer(forKey: "k1")?.fingerprint == "f")
        #expect(store.isAvailable)
        await store.close()
    }

    /// Unused past its idle limit, the connection is not trusted (a network
    /// may have dropped it silently): with no limit at all, each batch opens one.
    @Test func aConnectionUnusedPastTheIdleLimitIsReplaced() async throws {
        let lane = try Self.lane(idleLimit: .zero), pool = try Self.pool()
        let first = try await Self.backend(lane, pool)
        let second = try await Self.backend(lane, pool)
        #expect(first != second)
        #expect(lane.connectionsOpened == 2)
        await lane.close()
    }

    /// Two transactions on one connection would interleave: a second batch
    /// while one runs is refused, and the first is not disturbed.
    @Test func aSecondBatchWhileOneRunsIsRefused() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let running = Task {
            try await lane.run(for: pool) { connection -> Int32 in
                enter.yield()
                for await _ in released { break }
                return try await connection.query("SELECT 7", logger: Logger(label: "test.lane")).collect().first!.decode(Int32.self)
            }
        }
        for await _ in entered { break }
        await #expect(throws: LaneConnection.LaneBusy.self) {
            try await lane.run(for: pool) { _ in 1 }
        }
        release.yield()
        #expect(try await running.value == 7)
        #expect(lane.connectionsOpened == 1)
        await lane.close()
    }

    @Test func aClosedLaneRefusesEveryBatch() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        let first = try await Self.backend(lane, pool)
        await lane.close()
        await #expect(throws: StoreUnavailable.self) { try await Self.backend(lane, pool) }
        #expect(try await waitUntil { (try? await Self.alive(first)) == false })
    }
}
