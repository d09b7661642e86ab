import Foundation
import PaymentGateway
import PluginHost
import Testing

/// The Tabby adapter refuses to start on an unusable configuration, with a
/// message naming the setting.
@Suite("Tabby adapter configuration")
struct TabbyConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced, loaded by a gateway.
    func load(config: [String: String]) throws -> ProviderRecord? {
        try ShippedManifestLoader.load("tabby", library: "libTabbyAdapter.so", config: config)
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
