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
       .timeLimit(.minutes(5)))
struct LaneConnectionTests {
    static func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let configuration = try #require(TestPostgres.configuration)
        var options = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        options.options.connectTimeout = .seconds(60)
        return options
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
        return LaneConnection(configuration: { options }, logger: Logger(label: "test.lane"), idleLimit: idleLimit)
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
        let first = try await Self.backend(lane, try Self.pool())
        let second = try await Self.backend(lane, try Self.pool())
        #expect(first != second)
        #expect(lane.connectionsOpened == 2)
        #expect(try await waitUntil { (try? await Self.alive(first)) == false }, "the old pool's lane connection was left open")
        await lane.close()
    }

    /// The server refusing a statement leaves the connection as it was; any
    /// other failure, and the lane does not trust it again.
    @Test func onlyAStatementRefusedKeepsTheConnection() async throws {
        let lane = try Self.lane(), pool = try Self.pool()
        let first = try await Self.backend(lane, pool)
        await #expect(throws: PSQLError.self) {
            try await lane.run(for: pool) { try await $0.query("SELECT 1 / 0", logger: Logger(label: "test.lane")).collect() }
        }
        #expect(try await Self.backend(lane, pool) == first)
        struct Unreadable: Error {}
        await #expect(throws: Unreadable.self) {
            try await lane.run(for: pool) { _ in throw Unreadable() }
        }
        let after = try await Self.backend(lane, pool)
        #expect(after != first)
        #expect(try await waitUntil { (try? await Self.alive(first)) == false }, "the connection not trusted was left open")
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
