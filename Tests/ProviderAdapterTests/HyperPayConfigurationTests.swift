import Foundation
import PaymentGateway
import PluginHost
import Testing

/// The HyperPay adapter refuses to start on an incomplete configuration,
/// with a message naming what is missing.
@Suite("HyperPay adapter configuration")
struct HyperPayConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: String]) throws -> ProviderRecord? {
        try ShippedManifestLoader.load("hyperpay", library: "libHyperPayAdapter.so", config: config)
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
