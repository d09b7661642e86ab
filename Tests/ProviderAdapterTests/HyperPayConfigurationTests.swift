import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import TestSupport
import Testing

/// The HyperPay adapter refuses to start on an incomplete configuration,
/// with a message naming what is missing.
@Suite("HyperPay adapter configuration", .heavy)
struct HyperPayConfigurationTests {
    static let webhookKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

    /// The shipped manifest, enabled, with `config` replaced and the
    /// `webhook_key` secret set (unless told), loaded by a gateway.
    func load(config: [String: Any], secrets: [String: String] = ["webhook_key": HyperPayConfigurationTests.webhookKey]) async throws -> ProviderRecord? {
        try await ShippedManifestLoader.load("hyperpay", library: "libHyperPayAdapter.so", config: config, secrets: secrets)
    }

    static let complete: [String: String] = [
        "base_url": "https://eu-test.oppwa.com", "entity_id": "8ac7a4c97d1f3f6a017d1f4a5b2c0001",
        "mada_entity_id": "8ac7a4c97d1f3f6a017d1f4a5b2c0002", "widget_page_url": "https://shop.example/pay?checkoutId={checkoutId}&brands={brands}",
    ]

    @Test func aCompleteConfigurationLoads() async throws {
        let record = try #require(try await load(config: Self.complete))
        #expect(record.state == .loaded)
    }

    @Test(arguments: ["base_url", "entity_id", "mada_entity_id", "widget_page_url"])
    func aMissingSettingIsRefusedByName(key: String) async throws {
        var config = Self.complete
        config.removeValue(forKey: key)
        let record = try #require(try await load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }

    /// Without the key HyperPay encrypts notifications with, none can be
    /// authenticated: a live configuration is refused at create, naming the
    /// secret; a sandbox one (a test setup) loads and refuses every notification.
    @Test(arguments: [[String: String](), ["webhook_key": ""]])
    func aLiveConfigurationWithoutItsWebhookKeyIsRefusedNamingIt(secrets: [String: String]) async throws {
        let record = try #require(try await load(config: Self.complete, secrets: secrets))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("webhook_key") == true, "\(String(describing: record.failure))")
        var sandbox: [String: Any] = Self.complete
        sandbox["sandbox"] = true
        #expect(try await load(config: sandbox, secrets: secrets)?.state == .loaded)
    }
}
