import CheckoutEngine
import Foundation
import PostgresNIO
@testable import PostgresCheckoutStore
import TestSupport
import Testing

/// `--database` and its password, and how the store tells a busy pool from a
/// database gone.
@Suite struct PostgresConfigurationTests {
    @Test func aURLIsReadWithEveryParameterAndItsDefaults() throws {
        let plain = try PostgresConfiguration(url: "postgres://gw@db.internal/payments", password: "s3cret")
        #expect(plain.host == "db.internal" && plain.port == 5432 && plain.username == "gw" && plain.database == "payments")
        #expect(plain.tls == .prefer && plain.poolSize == 10 && plain.schema == "public" && plain.callTimeout == .seconds(5))
        let full = try PostgresConfiguration(url: "postgresql://gw@10.0.0.5:6432/payments?sslmode=verify-full&pool=40&schema=eu_1&timeout=2.5",
                                             password: nil)
        #expect(full.port == 6432 && full.tls == .verifyFull && full.poolSize == 40 && full.schema == "eu_1" && full.callTimeout == .milliseconds(2500))
        #expect(!full.description.contains("s3cret") && !plain.description.contains("s3cret"), "the password is never shown")
    }

    @Test(arguments: [
        ("postgres://gw:s3cret@db/payments", "holds a password"),
        ("mysql://gw@db/payments", "must be a postgres:// URL"),
        ("postgres://db/payments", "names no user"),
        ("postgres://gw@db/", "names no database"),
        ("postgres://gw@db/payments?sslmode=maybe", "sslmode must be"),
        ("postgres://gw@db/payments?pool=0", "pool must be"),
        ("postgres://gw@db/payments?schema=1x", "schema must be a plain name"),
        ("postgres://gw@db/payments?schema=a;drop", "schema must be a plain name"),
        ("postgres://gw@db/payments?timeout=-1", "timeout must be"),
        ("postgres://gw@db/payments?sslrootcert=/no/such/file", "cannot be read"),
        ("postgres://gw@db/payments?application=x", "unknown parameter application"),
    ])
    func aBadURLIsRefusedSayingWhatIsWrong(url: String, says: String) {
        #expect {
            try PostgresConfiguration(url: url, password: nil)
        } throws: { error in
            let text = "\(error)"
            return text.contains(says) && !text.contains("s3cret")
        }
    }

    @Test func thePasswordComesFromAFileOrTheEnvironmentOneWay() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString)")
        try Data("s3cret\r\nsecond line\n".utf8).write(to: file)
        #expect(try PostgresConfiguration.password(file: file.path, environment: nil) == "s3cret", "the first line, without its CR LF")
        #expect(try PostgresConfiguration.password(file: nil, environment: "GW_DB_PW", environment: ["GW_DB_PW": "x"]) == "x")
        #expect(throws: PostgresConfiguration.Invalid.self) { try PostgresConfiguration.password(file: nil, environment: "GW_DB_PW", environment: [:]) }
        #expect(throws: PostgresConfiguration.Invalid.self) { try PostgresConfiguration.password(file: file.path, environment: "GW_DB_PW", environment: ["GW_DB_PW": "x"]) }
        try Data().write(to: file)
        #expect(throws: PostgresConfiguration.Invalid.self) { try PostgresConfiguration.password(file: file.path, environment: nil) }
        #expect(try PostgresConfiguration.password(file: nil, environment: nil) == nil)
    }

    /// A store of its own schema whose pool has one connection, ready.
    static func storeOfOneConnection(callTimeout: Duration) async throws -> PostgresCheckoutStore? {
        guard var configuration = TestPostgres.configuration else { return nil }
        configuration.schema = TestPostgres.newSchema()
        configuration.poolSize = 1
        configuration.callTimeout = callTimeout
        let store = PostgresCheckoutStore(configuration: configuration)
        _ = try await store.ready(within: .seconds(240))
        return store
    }

    /// A call that finds every pooled connection busy past its deadline is
    /// refused (503), but the store stays up: only a database that does not
    /// answer a connection of its own drops the pool.
    // Hung once in a full run: the busy call's own first lease had to open the
    // pool's one connection, which under a loaded suite took over its 1 s
    // deadline; it failed before signalling, and the wait below never ended.
    // Now the connection is opened first, and a busy call that fails ends the
    // wait with its error.
    @Test(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster"), .timeLimit(.minutes(TestTime.minutes(5))))
    func aBusyPoolIsNotALostDatabase() async throws {
        guard let store = try await Self.storeOfOneConnection(callTimeout: .seconds(1)) else { return }
        // Open the pool's one connection (a loaded suite may need more than one 1 s try).
        for attempt in 1... {
            do { _ = try await store.session("s"); break } catch where attempt < 60 { continue }
        }
        let (started, signal) = AsyncStream<Void>.makeStream()
        let busy = Task {
            defer { signal.finish() }
            try await store.withConnection { connection, logger in
                signal.yield()
                // Busy long past the other call's 1 s, however late that call starts on a loaded machine.
                _ = try await connection.query("SELECT pg_sleep(20)", logger: logger)
            }
        }
        var iterator = started.makeAsyncIterator()
        guard await iterator.next() != nil else {
            try await busy.value
            Issue.record("the busy call ended without running")
            return
        }
        // A pooled call (a session's document; the batch lanes' calls have
        // connections of their own, LaneConnection).
        await #expect {
            try await store.session("s")
        } throws: { error in
            "\(error)".contains("every pooled connection was busy")
        }
        #expect(store.isAvailable, "a busy pool was taken for a lost database")
        try await busy.value
        #expect(try await store.session("s") == nil)
        await store.close()
    }

    /// A call whose caller is cancelled (a client gone) while it waits for
    /// the pool's one busy connection ends at once as a call that did not
    /// get through (503 to the engine, logged as a warning, not as a store
    /// failure), and the pool is not taken for a lost database.
    @Test(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster"), .timeLimit(.minutes(TestTime.minutes(5))))
    func aCallCancelledByItsCallerIsNotAStoreFailure() async throws {
        guard let store = try await Self.storeOfOneConnection(callTimeout: .seconds(120)) else { return }
        let (held, hold) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let busy = Task {
            defer { hold.finish() }
            try await store.withConnection { _, _ in
                hold.yield()
                for await _ in released { break }
            }
        }
        for await _ in held { break }
        let waiting = Task { try await store.session("s") }
        waiting.cancel()
        let error = await #expect(throws: StoreUnavailable.self) { try await waiting.value }
        #expect(error?.reason.contains("cancelled by its caller") == true, "\(String(describing: error))")
        #expect(store.isAvailable, "a cancelled call was taken for a lost database")
        release.yield()
        try await busy.value
        #expect(try await store.session("s") == nil)
        await store.close()
    }
}
