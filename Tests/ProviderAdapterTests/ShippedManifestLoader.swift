import Foundation
import Logging
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// Loads one provider's shipped manifest into a gateway over a scratch
/// folder, for the configuration tests.
enum ShippedManifestLoader {
    /// The shipped `<provider>.json`, enabled, with `config` in place of its
    /// own, `library` from the build and no `sandbox` member, `secrets` given
    /// as `file:` secrets in place of the shipped references of those names,
    /// then changed by `edit`; the provider's record once a gateway has loaded it.
    static func load(_ provider: String, library: String, config: [String: Any], secrets: [String: String] = [:],
                     edit: (inout [String: Any]) -> Void = { _ in }) async throws -> ProviderRecord? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(provider)-config-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var references: [String: String] = [:]
        for (name, value) in secrets {
            let file = folder.appendingPathComponent("secret-\(name)")
            try Data(value.utf8).write(to: file)
            references[name] = "file:\(file.path)"
        }
        try BuildProducts.writeShippedManifest("\(provider).json", into: manifests) { manifest in
            manifest["enabled"] = true
            manifest["config"] = config
            manifest["library"] = BuildProducts.directory.appendingPathComponent(library).path
            manifest.removeValue(forKey: "sandbox")
            var declared = manifest["secrets"] as? [String: String] ?? [:]
            declared.merge(references) { _, given in given }
            manifest["secrets"] = declared
            edit(&manifest)
        }
        var logger = Logger(label: "\(provider)-config")
        logger.logLevel = .critical
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        let gateway = try await PaymentGateway.open(configuration: configuration, logger: logger)
        let record = gateway.providerRecords.first { $0.id == provider }
        await gateway.shutdown()
        return record
    }
}
