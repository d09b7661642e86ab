import Foundation
import PaymentGateway
import PluginHost
import Testing

/// The Tamara adapter refuses to start on an incomplete or wrong
/// configuration, with a message naming the setting.
@Suite("Tamara adapter configuration")
struct TamaraConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: Any]) throws -> ProviderRecord? {
        try ShippedManifestLoader.load("tamara", library: "libTamaraAdapter.so", config: config)
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
