import Foundation
import Logging
import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// The STC Pay adapter refuses to start on an unusable configuration, with a
/// message naming the setting.
@Suite("STC Pay adapter configuration")
struct STCPayConfigurationTests {
    /// The shipped manifest, enabled, with `config` replaced (and no mutual
    /// TLS, whose secrets are not set here), loaded by a gateway.
    func load(config: [String: Any]) throws -> ProviderRecord? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stcpay-config-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = BuildProducts.shippedManifests.appendingPathComponent("stcpay.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        manifest["enabled"] = true
        manifest["config"] = config
        manifest["library"] = BuildProducts.directory.appendingPathComponent("libSTCPayAdapter.so").path
        manifest.removeValue(forKey: "sandbox")
        manifest.removeValue(forKey: "tls")
        manifest["secrets"] = [String: String]()
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifests.appendingPathComponent("stcpay.json"))
        var logger = Logger(label: "stcpay-config")
        logger.logLevel = .critical
        let gateway = try PaymentGateway(configuration: .init(manifests: manifests.path, data: folder.appendingPathComponent("data").path), logger: logger)
        defer { Task { await gateway.shutdown() } }
        return gateway.providerRecords.first { $0.id == "stcpay" }
    }

    static let base = "https://b2b.stcpay.com.sa/B2B.DirectPayment.WebApi/DirectPayment/V4"

    @Test func aConfigurationWithBaseURLAndMerchantIdLoads() throws {
        let record = try #require(try load(config: ["base_url": Self.base, "merchant_id": "61240056", "branch_id": "1"]))
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
    func anUnusableSettingIsRefusedByName(config: String, named: String) throws {
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
        let record = try #require(try load(config: parsed))
        #expect(record.state == .refused)
        #expect(record.failure?.description.contains(named) == true)
    }
}
