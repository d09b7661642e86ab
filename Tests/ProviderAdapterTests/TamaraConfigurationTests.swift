import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import TestSupport
import Testing

/// The Tamara adapter refuses to start on an incomplete or wrong
/// configuration, with a message naming the setting.
@Suite("Tamara adapter configuration", .heavy)
struct TamaraConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced and the
    /// `notification_token` secret set (unless told), loaded by a gateway.
    func load(config: [String: Any], secrets: [String: String] = ["notification_token": "tamara-notification-token-7b1d"]) async throws -> ProviderRecord? {
        try await ShippedManifestLoader.load("tamara", library: "libTamaraAdapter.so", config: config, secrets: secrets)
    }

    static var complete: [String: Any] { [
        "base_url": "https://api-sandbox.tamara.co", "notification_url": "https://pay.example/webhooks/tamara",
    ] }

    @Test func aCompleteConfigurationLoads() async throws {
        let record = try #require(try await load(config: Self.complete))
        #expect(record.state == .loaded)
    }

    @Test(arguments: ["base_url", "notification_url"])
    func aMissingSettingIsRefusedByName(key: String) async throws {
        var config = Self.complete
        config.removeValue(forKey: key)
        let record = try #require(try await load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }

    /// Each setting with a wrong value, as JSON text.
    @Test(arguments: [("payment_type", "\"PAY_LATER\""), ("instalments", "1"), ("locale", "\"fr_FR\""), ("base_url", "\"ftp://api.tamara.co\"")])
    func aWrongSettingIsRefusedByName(key: String, json: String) async throws {
        var config = Self.complete
        config[key] = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let record = try #require(try await load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("config.\(key)") == true)
    }

    /// Without the token Tamara signs notifications with, none can be
    /// authenticated: a live configuration is refused at create, naming the
    /// secret; a sandbox one (a test setup) loads and refuses every notification.
    @Test(arguments: [[String: String](), ["notification_token": ""]])
    func aLiveConfigurationWithoutItsNotificationTokenIsRefusedNamingIt(secrets: [String: String]) async throws {
        let record = try #require(try await load(config: Self.complete, secrets: secrets))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains("notification_token") == true, "\(String(describing: record.failure))")
        var sandbox = Self.complete
        sandbox["sandbox"] = true
        #expect(try await load(config: sandbox, secrets: secrets)?.state == .loaded)
    }
}
