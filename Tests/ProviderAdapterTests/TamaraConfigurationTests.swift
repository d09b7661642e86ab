import Foundation
import Logging
import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// The Tamara adapter refuses to start on an incomplete or wrong
/// configuration, with a message naming the setting.
@Suite("Tamara adapter configuration")
struct TamaraConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: Any]) throws -> ProviderRecord? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tamara-config-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = BuildProducts.shippedManifests.appendingPathComponent("tamara.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        manifest["enabled"] = true
        manifest["config"] = config
        manifest["library"] = BuildProducts.directory.appendingPathComponent("libTamaraAdapter.so").path
        manifest.removeValue(forKey: "sandbox")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifests.appendingPathComponent("tamara.json"))
        var logger = Logger(label: "tamara-config")
        logger.logLevel = .critical
        let gateway = try PaymentGateway(configuration: .init(manifests: manifests.path, data: folder.appendingPathComponent("data").path), logger: logger)
        defer { Task { await gateway.shutdown() } }
        return gateway.providerRecords.first { $0.id == "tamara" }
    }

    static var complete: [String: Any] { [
        "base_url": "https://api-sandbox.tamara.co", "notification_url": "https://pay.example/webhooks/tamara",
    ] }

    @Test func aCompleteConfigurationLoads() throws {
        let record = try #require(try load(config: Self.complete))
        #expect(record.state == .loaded)
    }

    @Test(arguments: ["base_url", "notification_url"])
    func aMissingSettingIsRefusedByName(key: String) throws {
        var config = Self.complete
        config.removeValue(forKey: key)
        let record = try #require(try load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }

    /// Each setting with a wrong value, as JSON text.
    @Test(arguments: [("payment_type", "\"PAY_LATER\""), ("instalments", "1"), ("locale", "\"fr_FR\""), ("base_url", "\"ftp://api.tamara.co\"")])
    func aWrongSettingIsRefusedByName(key: String, json: String) throws {
        var config = Self.complete
        config[key] = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let record = try #require(try load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }
}
