import CheckoutEngine
import Foundation
import Logging
import PaymentGateway
import PluginHost
import PostgresCheckoutStore
import SQLiteCheckoutStore
import ArgumentParser

/// Builds the plugin host (and the embedded gateway) from command-line options.
enum HostSetup {
    static func bootstrapLogging(verbose: Bool) {
        LoggingSystem.bootstrap { label in GatewayLogHandler(label: label, level: verbose ? .debug : .error) }
    }

    static func loader(_ options: HostOptions, verbose: Bool = false) -> AdapterLoader {
        bootstrapLogging(verbose: verbose)
        let store = LibraryStore(directory: URL(fileURLWithPath: options.data).appendingPathComponent("plugins"))
        return AdapterLoader(store: store)
    }

    static func manifestsURL(_ options: HostOptions) -> URL {
        URL(fileURLWithPath: options.manifests, isDirectory: true)
    }

    /// The embedded gateway on the options' manifests, data folder and store,
    /// with sandbox adapters keeping their simulated books under `<data>` so
    /// later commands find them.
    static func gateway(_ options: HostOptions, verbose: Bool = false) async throws -> PaymentGateway {
        keepSandboxBooks(in: options.data)
        bootstrapLogging(verbose: verbose)
        var configuration = PaymentGateway.Configuration(manifests: options.manifests, data: options.data)
        configuration.store = try await store(options)
        return try await PaymentGateway.open(configuration: configuration)
    }

    /// Runs `body` with the embedded gateway, then shuts it down (its
    /// adapters, then its store), whatever `body` did.
    static func withGateway<T>(_ options: HostOptions, verbose: Bool = false, _ body: (PaymentGateway) async throws -> T) async throws -> T {
        let gateway = try await gateway(options, verbose: verbose)
        return try await finally(await gateway.shutdown()) { try await body(gateway) }
    }

    /// Runs `body` with the API keys of the options' store, then closes it.
    static func withKeys<T>(_ options: HostOptions, _ body: (APIKeys) async throws -> T) async throws -> T {
        let store = try await store(options)
        return try await finally(await store.close()) { try await body(APIKeys(store: store)) }
    }

    /// `body`'s value or error, after `end` ran either way.
    private static func finally<T>(_ end: @autoclosure () async -> Void, _ body: () async throws -> T) async throws -> T {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        await end()
        return try result.get()
    }

    /// The store the options name: PostgreSQL for `--database postgres://…`,
    /// else SQLite at `<data>/checkout.sqlite` (created and migrated if need
    /// be). A running server on the same store sees what a command writes.
    ///
    /// A command waits up to `wait` for PostgreSQL (a clear error after it,
    /// saying what the database answered); `gateway serve` waits for nothing
    /// (`nil`): it starts, and is ready once the database answers.
    static func store(_ options: HostOptions, logger: Logger = Logger(label: "gateway.store"),
                      wait: Duration? = .seconds(30)) async throws -> any CheckoutStore & APIKeyStore {
        guard let url = options.database else {
            if options.databasePasswordFile != nil || options.databasePasswordEnv != nil {
                throw ValidationError("--database-password-file and --database-password-env go with --database postgres://…")
            }
            // Opening and migrating blocks (file I/O, fsync): off the concurrency pool.
            let path = storePath(options.data)
            return try await OffThePool.run("store-open") { try SQLiteCheckoutStore(path: path) }
        }
        let configuration: PostgresConfiguration
        do {
            let password = try PostgresConfiguration.password(file: options.databasePasswordFile, environment: options.databasePasswordEnv)
            configuration = try PostgresConfiguration(url: url, password: password)
        } catch let invalid as PostgresConfiguration.Invalid {
            throw ValidationError(invalid.description)
        }
        let store = PostgresCheckoutStore(configuration: configuration, logger: logger)
        if let wait {
            do {
                _ = try await store.ready(within: wait)
            } catch {
                await store.close()
                throw ValidationError("\(error)")
            }
        }
        return store
    }

    static func storePath(_ data: String) -> String {
        URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("checkout.sqlite").path
    }

    /// Lets the sandbox adapters of this process (the mock) keep their
    /// simulated provider's books under `data`, so a later command finds the
    /// payments a real provider would remember: `GATEWAY_SANDBOX_STATE`,
    /// which the mock reads when it is loaded. Set here, by the command, first
    /// thing and before the command starts any thread of its own, because
    /// changing the environment races every thread that reads it; the
    /// embeddable library never touches the process environment.
    static func keepSandboxBooks(in data: String) {
        setenv("GATEWAY_SANDBOX_STATE", URL(fileURLWithPath: data).standardizedFileURL.path, 1)
    }
}
