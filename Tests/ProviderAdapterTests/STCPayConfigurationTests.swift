import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import TestSupport
import Testing

/// The STC Pay adapter refuses to start on an unusable configuration, with a
/// message naming the setting.
@Suite("STC Pay adapter configuration", .heavy)
struct STCPayConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced (and no mutual
    /// TLS, whose secrets are not set here), loaded by a gateway.
    func load(config: [String: Any]) async throws -> ProviderRecord? {
        try await ShippedManifestLoader.load("stcpay", library: "libSTCPayAdapter.so", config: config) { manifest in
            manifest.removeValue(forKey: "tls")
            manifest["secrets"] = [String: String]()
        }
    }

    static let base = "https://b2b.stcpay.com.sa/B2B.DirectPayment.WebApi/DirectPayment/V4"

    @Test func aConfigurationWithBaseURLAndMerchantIdLoads() async throws {
        let record = try #require(try await load(config: ["base_url": Self.base, "merchant_id": "61240056", "branch_id": "1"]))
        #expect(record.state == .loaded)
    }

    /// Each case is the `config` as JSON text and the setting its refusal must name.
    @Test(arguments: [
        ("{}", "config.base_url"),
        ("{\"base_url\": \"\", \"merchant_id\": \"61240056\"}", "config.base_url"),
        ("{\"base_url\": \"b2b.stcpay.com.sa\", \"merchant_id\": \"61240056\"}", "config.base_url"),
        ("{\"base_url\": \"\(base)\"}", "config.merchant_id"),
        ("{\"base_url\": \"\(base)\", \"merchant_id\": \"61240056\", \"sandbox\": \"yes\"}", "config.sandbox"),
        ("{\"base_url\": \"\(base)\", \"merchant_id\": \"61240056\", \"request_timeout_ms\": 5}", "config.request_timeout_ms"),
    ])
    func anUnusableSettingIsRefusedByName(config: String, named: String) async throws {
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
        let record = try #require(try await load(config: parsed))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains(named) == true)
    }
}
