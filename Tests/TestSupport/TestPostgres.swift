import CheckoutEngine
import Foundation
import Logging
import PostgresCheckoutStore

/// The PostgreSQL cluster of the tests, when there is one:
/// `scripts/test-postgres run swift test` starts a throwaway cluster and sets
/// `GATEWAY_TEST_POSTGRES_URL` (no password in it) and
/// `GATEWAY_TEST_POSTGRES_PASSWORD_FILE`; `.ci/run` always does. Without
/// them the PostgreSQL cases are not run, except under CI (`CI` set), where
/// ``requiredButMissing`` fails a test: CI never passes without them.
public enum TestPostgres {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The cluster's configuration (schema `public`), or nil without one.
    public static var configuration: PostgresConfiguration? {
        guard let url = environment["GATEWAY_TEST_POSTGRES_URL"], !url.isEmpty else { return nil }
        let password = try? PostgresConfiguration.password(file: environment["GATEWAY_TEST_POSTGRES_PASSWORD_FILE"], environment: nil)
        return try? PostgresConfiguration(url: url + "?sslmode=disable", password: password)
    }

    public static var isAvailable: Bool { configuration != nil }

    /// Whether the run is CI's, which must run the PostgreSQL cases.
    public static var requiredButMissing: Bool { !isAvailable && environment["CI"] != nil }

    /// The cluster's data folder and `scripts/test-postgres`, for tests that
    /// stop and start a cluster of their own (`scripts/test-postgres cluster DIR`).
    public static var root: String? { environment["GATEWAY_TEST_POSTGRES_ROOT"] }
    public static var script: String? { environment["GATEWAY_TEST_POSTGRES_SCRIPT"] }

    /// The cluster's URL with `schema` (a new one per test: the tests share
    /// one database, never one another's rows).
    public static func url(schema: String) -> String? {
        environment["GATEWAY_TEST_POSTGRES_URL"].map { "\($0)?sslmode=disable&schema=\(schema)" }
    }

    public static func newSchema() -> String {
        "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
    }

    /// A store in a schema of its own, migrated; closed by the caller.
    public static func store(schema: String = newSchema(), logger: Logger = Logger(label: "test.postgres")) async throws -> PostgresCheckoutStore {
        guard var configuration else { throw Missing() }
        configuration.schema = schema
        // The whole suite shares two cores with the database, and in its
        // first minute every test waits for the cores (a pure test takes a
        // minute then): a connection can take that long to open. The tests
        // of the deadline itself set their own.
        configuration.callTimeout = .seconds(90)
        let store = PostgresCheckoutStore(configuration: configuration, logger: logger)
        _ = try await store.ready(within: .seconds(240))
        return store
    }

    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "no PostgreSQL test cluster: run the tests under scripts/test-postgres (scripts/test-postgres run swift test)"
        }
    }
}
