import Foundation
import Logging
import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// The HyperPay adapter refuses to start on an incomplete configuration,
/// with a message naming what is missing.
@Suite("HyperPay adapter configuration")
struct HyperPayConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: String]) throws -> ProviderRecord? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hyperpay-config-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = BuildProducts.shippedManifests.appendingPathComponent("hyperpay.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        manifest["enabled"] = true
        manifest["config"] = config
        manifest["library"] = BuildProducts.directory.appendingPathComponent("libHyperPayAdapter.so").path
        manifest.removeValue(forKey: "sandbox")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifests.appendingPathComponent("hyperpay.json"))
        var logger = Logger(label: "hyperpay-config")
        logger.logLevel = .critical
        let gateway = try PaymentGateway(configuration: .init(manifests: manifests.path, data: folder.appendingPathComponent("data").path), logger: logger)
        defer { Task { await gateway.shutdown() } }
        return gateway.providerRecords.first { $0.id == "hyperpay" }
    }

    static let complete: [String: String] = [
        "base_url": "https://eu-test.oppwa.com", "entity_id": "8ac7a4c97d1f3f6a017d1f4a5b2c0001",
        "mada_entity_id": "8ac7a4c97d1f3f6a017d1f4a5b2c0002", "widget_page_url": "https://shop.example/pay?checkoutId={checkoutId}&brands={brands}",
    ]

    @Test func aCompleteConfigurationLoads() throws {
        let record = try #require(try load(config: Self.complete))
        #expect(record.state == .loaded)
    }

    @Test(arguments: ["base_url", "entity_id", "mada_entity_id", "widget_page_url"])
    func aMissingSettingIsRefusedByName(key: String) throws {
        var config = Self.complete
        config.removeValue(forKey: key)
        let record = try #require(try load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }
}
