import Foundation
import Logging
import PaymentGateway
import PluginHost

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
    static func gateway(_ options: HostOptions, verbose: Bool = false) throws -> PaymentGateway {
        bootstrapLogging(verbose: verbose)
        var configuration = PaymentGateway.Configuration(manifests: options.manifests, data: options.data)
        configuration.sandboxState = true
        return try PaymentGateway(configuration: configuration)
    }
}
