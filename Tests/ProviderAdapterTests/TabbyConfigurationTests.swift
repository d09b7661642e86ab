import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import TestSupport
import Testing

/// The Tabby adapter refuses to start on an unusable configuration, with a
/// message naming the setting.
@Suite("Tabby adapter configuration", .heavy)
struct TabbyConfigurationTests {
    static let headerValue = "tabby-webhook-value-5f0c2e"

    /// The shipped manifest, enabled, with `config` replaced and the
    /// `webhook_header_value` secret set (unless told), loaded by a gateway.
    func load(config: [String: String], secrets: [String: String] = ["webhook_header_value": TabbyConfigurationTests.headerValue]) async throws -> ProviderRecord? {
        try await ShippedManifestLoader.load("tabby", library: "libTabbyAdapter.so", config: config, secrets: secrets)
    }

    @Test(arguments: [
        ["base_url_sa": "https://api.tabby.sa", "base_url_ai": "https://api.tabby.ai", "webhook_header": "X-Tabby-Token"],
        ["base_url_sa": "https://api.tabby.sa", "webhook_header": "X-Tabby-Token"],
        ["base_url_ai": "https://api.tabby.ai", "merchant_code": "shop", "lang": "ar", "webhook_header": "X-Tabby-Token"],
    ])
    func aConfigurationWithARegionsHostLoads(config: [String: String]) async throws {
        let record = try #require(try await load(config: config))
        #expect(record.state == .loaded)
    }

    /// Tabby signs no webhook: the registered header and its value are the
    /// only thing between a forged notification and a capture. A live
    /// configuration without either is refused at create, naming what is
    /// missing and never the secret's value.
    @Test(arguments: [
        (["base_url_sa": "https://api.tabby.sa"], ["webhook_header_value": TabbyConfigurationTests.headerValue], "config.webhook_header"),
        (["base_url_sa": "https://api.tabby.sa", "webhook_header": ""], ["webhook_header_value": TabbyConfigurationTests.headerValue], "config.webhook_header"),
        (["base_url_sa": "https://api.tabby.sa", "webhook_header": "X-Tabby-Token"], [:], "webhook_header_value"),
        (["base_url_sa": "https://api.tabby.sa", "webhook_header": "X-Tabby-Token"], ["webhook_header_value": ""], "webhook_header_value"),
    ])
    func aLiveConfigurationWithoutItsWebhookSecretIsRefusedNamingIt(config: [String: String], secrets: [String: String], named: String) async throws {
        let record = try #require(try await load(config: config, secrets: secrets))
        #expect(record.state == .refused)
        let failure = record.failure?.description ?? ""
        #expect(failure.contains(named), "\(failure)")
        #expect(!failure.contains(TabbyConfigurationTests.headerValue))
    }

    /// `sandbox` true is a test setup: it loads without a webhook secret (and refuses every notification).
    @Test func aSandboxConfigurationLoadsWithoutAWebhookSecret() async throws {
        let record = try #require(try await ShippedManifestLoader.load("tabby", library: "libTabbyAdapter.so",
                                                                 config: ["base_url_sa": "https://api.tabby.sa", "sandbox": true]))
        #expect(record.state == .loaded)
    }

    @Test(arguments: [
        ([String: String](), "config.base_url_sa"),
        (["base_url_sa": "", "base_url_ai": ""], "config.base_url_sa"),
        (["base_url_sa": "https://api.tabby.sa", "base_url_ai": "api.tabby.ai"], "config.base_url_ai"),
        (["base_url_sa": "https://api.tabby.sa", "lang": "fr"], "config.lang"),
        (["base_url_sa": "https://api.tabby.sa", "webhook_header": "X Bad: header"], "config.webhook_header"),
    ])
    func anUnusableSettingIsRefusedByName(config: [String: String], named: String) async throws {
        let record = try #require(try await load(config: config))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains(named) == true)
    }
}
