import Dispatch
import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing

/// The deadline sweeper fires every adapter's deadlines from one thread, so
/// it must never run adapter code: an adapter whose `cancel` blocks used to
/// hold that thread, and no other adapter's call could time out any more.
@Suite struct BlockingCancelTests {
    static let request = AuthorizeRequest(paymentId: "pay_1", idempotencyKey: "k1", amount: Money(value: 1000, currency: "SAR"),
                                          method: "visa", country: "SA", orderId: "o-1", capture: .automatic)

    @Test func aCancelThatBlocksDelaysNoOtherAdaptersDeadlineAndIsReported() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let release = folder.root.appendingPathComponent("release-the-cancel")
        try await FabricatedAdapter(id: "stuck", completions: 0, cancelWaitsFor: release.path).install(in: folder, manifestName: "stuck.json")
        try await FabricatedAdapter(id: "quiet", completions: 0).install(in: folder, manifestName: "quiet.json")
        let stuck = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("stuck.json"), loader: folder.loader).adapter)
        let quiet = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("quiet.json"), loader: folder.loader).adapter)
        // Whatever happens, the cancel is released in the end (so a failure here fails, not hangs).
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { FileManager.default.createFile(atPath: release.path, contents: nil) }
        let payload = Data(Self.request.jsonBytes())

        // stuck's call times out, and its cancel now blocks until released.
        #expect(await stuck.invoke(.authorize, payload: payload, timeout: .milliseconds(20)) == .timedOut)
        // Another adapter's deadline still fires meanwhile.
        #expect(await quiet.invoke(.authorize, payload: payload, timeout: .milliseconds(20)) == .timedOut)
        #expect(!FileManager.default.fileExists(atPath: release.path), "quiet's deadline waited for stuck's cancel")

        // The blocking cancel is reported once it passes the bound.
        #expect(try await waitUntil { stuck.blockedCalls > 0 })
        #expect(stuck.blockedCalls == 1 && quiet.blockedCalls == 0)

        FileManager.default.createFile(atPath: release.path, contents: nil)
        #expect(await stuck.shutdown(grace: .milliseconds(50)) == false, "it still owes its completion: never destroyed")
        #expect(await quiet.shutdown(grace: .milliseconds(50)) == false)
    }
}
