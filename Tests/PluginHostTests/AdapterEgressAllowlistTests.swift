import Foundation
import GatewayPayloads
import Logging
@testable import PluginHost
import Testing
import TestSupport

/// A shipped adapter, dlopened and called through the bridge, whose
/// configuration points it at a host its manifest's `egress` does not list:
/// the host refuses the request before anything is sent, says so in the log,
/// and the adapter reports a payment that was not charged.
@Suite struct AdapterEgressAllowlistTests {
    @Test func aShippedAdapterAskingForAHostOutsideItsAllowlistIsRefused() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let token = folder.root.appendingPathComponent("access-token")
        try FileManager.default.createDirectory(at: folder.root, withIntermediateDirectories: true)
        try Data("sandbox-token-0123456789".utf8).write(to: token)
        try folder.writeVariant(of: "hyperpay.json", as: "hyperpay.json", [
            "enabled": true,
            "config": ["base_url": "https://api.not-hyperpay.example", "entity_id": "entity-visa", "mada_entity_id": "entity-mada",
                       "widget_page_url": "https://shop.example/pay/{checkoutId}?brands={brands}", "request_timeout_ms": 2000],
            "secrets": ["access_token": "file:\(token.path)", "webhook_key": "file:\(token.path)"],
            "egress": ["eu-prod.oppwa.com:443"],
        ])
        let logs = EgressLogRecorder()
        let loader = AdapterLoader(searchPath: PluginSearchPath(extraDirectories: [BuildProducts.directory]),
                                   store: LibraryStore(directory: folder.store), egressClient: RecordingEgressClient(),
                                   logger: logs.logger(level: .info))
        let records = try ProviderRegistry.load(directory: folder.manifests, loader: loader)
        let hyperpay = try #require(records[id: "hyperpay"]?.adapter, "\(String(describing: records[id: "hyperpay"]?.failure))")

        let request = AuthorizeRequest(
            paymentId: "pay_allowlist", idempotencyKey: "k-allowlist", amount: Money(value: 9200, currency: "SAR"),
            method: "visa", country: "SA", orderId: "order-allowlist", capture: .automatic, returnUrl: "https://shop.example/back")
        do {
            let result = try await hyperpay.call(.authorize, request)
            #expect(result.status == .failed, "\(result)")
            #expect(result.problem?.safeToRetryElsewhere == true, "nothing was sent, so another provider may be tried: \(result)")
        } catch {
            guard case .failed(let status, let message) = error else {
                Issue.record("\(error)")
                // Shut down on this path too.
                await hyperpay.shutdown(grace: .seconds(2).scaled)
                return
            }
            #expect(status != .outcomeUnknown, "\(message)")
        }
        #expect(logs.text.contains("api.not-hyperpay.example:443 is not in the manifest's egress allowlist"), "\(logs.text)")
        await hyperpay.shutdown(grace: .seconds(2).scaled)
    }
}
