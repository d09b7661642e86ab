import CheckoutEngine
import Foundation
import Logging
import PaymentGateway
import PluginHost
import SQLiteCheckoutStore

/// Builds the plugin host (and the embedded gateway) from command-line options.
enum HostSetup {
    static func bootstrapLogging(verbose: Bool) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .error
            return handler
        }
    }

    static func loader(_ options: HostOptions, verbose: Bool = false) -> AdapterLoader {
        bootstrapLogging(verbose: verbose)
        let store = LibraryStore(directory: URL(fileURLWithPath: options.data).appendingPathComponent("plugins"))
        return AdapterLoader(store: store)
    }

    static func manifestsURL(_ options: HostOptions) -> URL {
        URL(fileURLWithPath: options.manifests, isDirectory: true)
    }

    /// The embedded gateway on the options' manifests and data folder (SQLite
    /// at `<data>/checkout.sqlite`), with sandbox adapters keeping their
    /// simulated books under `<data>` so later commands find them.
    static func gateway(_ options: HostOptions, verbose: Bool = false) async throws -> PaymentGateway {
        keepSandboxBooks(in: options.data)
        bootstrapLogging(verbose: verbose)
        return try await PaymentGateway.open(configuration: PaymentGateway.Configuration(manifests: options.manifests, data: options.data))
    }

    /// The store alone (`<data>/checkout.sqlite`, created and migrated if
    /// need be), for commands that load no adapter (`gateway keys`). The
    /// gateway opens the same file, so a running server sees what they write.
    static func store(_ options: HostOptions) throws -> any CheckoutStore & APIKeyStore {
        try SQLiteCheckoutStore(path: storePath(options.data))
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
