import Foundation
import Logging
import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// The Tabby adapter refuses to start on an unusable configuration, with a
/// message naming the setting.
@Suite("Tabby adapter configuration")
struct TabbyConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: String]) throws -> ProviderRecord? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tabby-config-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = BuildProducts.shippedManifests.appendingPathComponent("tabby.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        manifest["enabled"] = true
        manifest["config"] = config
        manifest["library"] = BuildProducts.directory.appendingPathComponent("libTabbyAdapter.so").path
        manifest.removeValue(forKey: "sandbox")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifests.appendingPathComponent("tabby.json"))
        var logger = Logger(label: "tabby-config")
        logger.logLevel = .critical
        let gateway = try PaymentGateway(configuration: .init(manifests: manifests.path, data: folder.appendingPathComponent("data").path), logger: logger)
        defer { Task { await gateway.shutdown() } }
        return gateway.providerRecords.first { $0.id == "tabby" }
    }

    @Test(arguments: [
        ["base_url_sa": "https://api.tabby.sa", "base_url_ai": "https://api.tabby.ai"],
        ["base_url_sa": "https://api.tabby.sa"],
        ["base_url_ai": "https://api.tabby.ai", "merchant_code": "shop", "lang": "ar"],
    ])
    func aConfigurationWithARegionsHostLoads(config: [String: String]) throws {
        let record = try #require(try load(config: config))
        #expect(record.state == .loaded)
    }

    @Test(arguments: [
        ([String: String](), "config.base_url_sa"),
        (["base_url_sa": "", "base_url_ai": ""], "config.base_url_sa"),
        (["base_url_sa": "https://api.tabby.sa", "base_url_ai": "api.tabby.ai"], "config.base_url_ai"),
        (["base_url_sa": "https://api.tabby.sa", "lang": "fr"], "config.lang"),
        (["base_url_sa": "https://api.tabby.sa", "webhook_header": "X Bad: header"], "config.webhook_header"),
    ])
    func anUnusableSettingIsRefusedByName(config: [String: String], named: String) throws {
        let record = try #require(try load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains(named) == true)
    }
}
