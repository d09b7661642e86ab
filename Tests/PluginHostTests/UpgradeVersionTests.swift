import CheckoutEngine
import Foundation
import GatewayPayloads
import PaymentGateway
import Synchronization
import Testing

/// An upgrade proper: the manifest names a new library and version. Calls
/// before it are answered by the old version, calls after by the new one, and
/// each call says which (the `version` of `adapter_calls_total`).
@Suite struct UpgradeVersionTests {
    @Test func callsBeforeAndAfterAnUpgradeAreAnsweredByEachVersionAndSaySo() async throws {
        let staging = try ManifestFolder(copyShipped: false)
        let v1 = try await FabricatedAdapter(id: "fab", version: "1.0.0").install(in: staging, manifestName: "v1.json")
        let v2 = try await FabricatedAdapter(id: "fab", version: "2.0.0").install(in: staging, manifestName: "v2.json")
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = folder.manifests.appendingPathComponent("fab.json")
        try FileManager.default.copyItem(at: v1, to: manifest)
        let versions = Mutex<[String]>([])
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.reconcileInterval = .seconds(3600)
        configuration.callObserver = { call in versions.withLock { $0.append("\(call.operation) \(call.version)") } }
        let gateway = try PaymentGateway(configuration: configuration)

        func pay(_ order: String) async throws -> AttemptStatus {
            let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: order))
            return try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "fab")).status
        }
        #expect(try await pay("before") == .succeeded)
        try FileManager.default.removeItem(at: manifest)
        try FileManager.default.copyItem(at: v2, to: manifest)
        let report = try await gateway.manifests.reload()
        #expect(report.applied == ["fab.json"] && report.refused.isEmpty, "\(report)")
        #expect(gateway.providerRecords.first?.version == "2.0.0")
        #expect(try await pay("after") == .succeeded)
        #expect(versions.withLock { $0 } == ["authorize 1.0.0", "authorize 2.0.0"])
        await gateway.shutdown()
    }
}
