import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import Synchronization
import Testing

/// An upgrade proper: the manifest names a new library and version. Calls
/// before it are answered by the old version, calls after by the new one, and
/// each call says which (the `version` of `adapter_calls_total`).
@Suite struct UpgradeVersionTests {
    /// Sets `"isolation"` in a manifest file.
    static func isolate(_ url: URL, _ isolation: String) throws {
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        manifest["isolation"] = isolation
        try JSONSerialization.data(withJSONObject: manifest).write(to: url)
    }

    @Test(arguments: ["in-process", "process"])
    func callsBeforeAndAfterAnUpgradeAreAnsweredByEachVersionAndSaySo(isolation: String) async throws {
        let staging = try ManifestFolder(copyShipped: false)
        let v1 = try await FabricatedAdapter(id: "fab", version: "1.0.0").install(in: staging, manifestName: "v1.json")
        let v2 = try await FabricatedAdapter(id: "fab", version: "2.0.0").install(in: staging, manifestName: "v2.json")
        try Self.isolate(v1, isolation)
        try Self.isolate(v2, isolation)
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = folder.manifests.appendingPathComponent("fab.json")
        try FileManager.default.copyItem(at: v1, to: manifest)
        let versions = Mutex<[String]>([])
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.reconcileInterval = .seconds(3600)
        configuration.callObserver = { call in versions.withLock { $0.append("\(call.operation) \(call.version)") } }
        let gateway = try await PaymentGateway.open(configuration: configuration)
        let old = try #require(gateway.providerRecords.first?.adapter)
        #expect(old.isolation.rawValue == isolation)

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
        // The old instance is drained and destroyed (an old runner exits).
        #expect(try await waitUntil { old.isDestroyed })
        if let pid = old.runner?.pid { #expect(try await waitUntil { !ProcessTable.isRunning(pid) }) }
        await gateway.shutdown()
    }
}
