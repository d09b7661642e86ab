import Foundation
import Logging
import PluginHost

/// Builds the plugin host's loader from command-line options.
enum HostSetup {
    static func loader(_ options: HostOptions, verbose: Bool = false) -> AdapterLoader {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .error
            return handler
        }
        let store = LibraryStore(directory: URL(fileURLWithPath: options.data).appendingPathComponent("plugins"))
        return AdapterLoader(store: store)
    }

    static func manifestsURL(_ options: HostOptions) -> URL {
        URL(fileURLWithPath: options.manifests, isDirectory: true)
    }
}
