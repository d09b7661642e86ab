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
        if let pid = old.runner?.pid { #expect(try await waitUntil { !RunnerTests.isAlive(pid) }) }
        await gateway.shutdown()
    }

    /// The same upgrade under 200 concurrent payments: none fails, and the
    /// calls say both versions (what `adapter_calls_total{version}` counts).
    @Test(arguments: ["in-process", "process"])
    func anUpgradeUnder200ConcurrentPaymentsFailsNoneAndShowsBothVersions(isolation: String) async throws {
        let staging = try ManifestFolder(copyShipped: false)
        let v1 = try await FabricatedAdapter(id: "fab", version: "1.0.0").install(in: staging, manifestName: "v1.json")
        let v2 = try await FabricatedAdapter(id: "fab", version: "2.0.0").install(in: staging, manifestName: "v2.json")
        try Self.isolate(v1, isolation)
        try Self.isolate(v2, isolation)
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = folder.manifests.appendingPathComponent("fab.json")
        try FileManager.default.copyItem(at: v1, to: manifest)
        let versions = Mutex<[String: Int]>([:])
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.reconcileInterval = .seconds(3600)
        configuration.callObserver = { call in versions.withLock { $0["\(call.version) \(call.outcome)", default: 0] += 1 } }
        let gateway = try await PaymentGateway.open(configuration: configuration)
        let paid = Tally()
        let outcomes = try await withThrowingTaskGroup(of: AttemptStatus.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let session = try await gateway.createSession(
                        NewSession(amount: Money(value: 1000 + Int64(i), currency: "SAR"), country: "SA", orderId: "v-\(i)"), idempotencyKey: "v-\(i)-s")
                    let status = try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "fab"),
                                                           idempotencyKey: "v-\(i)-a").status
                    paid.value.add(1, ordering: .relaxed)
                    return status
                }
            }
            #expect(try await waitUntil(within: .seconds(120)) { paid.value.load(ordering: .relaxed) >= 20 })
            try FileManager.default.removeItem(at: manifest)
            try FileManager.default.copyItem(at: v2, to: manifest)
            let report = try await gateway.manifests.reload()
            #expect(report.applied == ["fab.json"] && report.refused.isEmpty, "\(report)")
            var outcomes: [AttemptStatus] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.count == 200 && outcomes.allSatisfy { $0 == .succeeded }, "\(outcomes.filter { $0 != .succeeded })")
        let seen = versions.withLock { $0 }
        #expect(seen.keys.allSatisfy { $0.hasSuffix(" succeeded") }, "\(seen)")
        #expect((seen["1.0.0 succeeded"] ?? 0) > 0 && seen.values.reduce(0, +) == 200, "\(seen)")
        // Payments begun after the upgrade landed are answered by 2.0.0.
        #expect(try await { () async throws -> AttemptStatus in
            let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "after"))
            return try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "fab")).status
        }() == .succeeded)
        #expect(versions.withLock { $0["2.0.0 succeeded"] ?? 0 } > 0, "\(versions.withLock { $0 })")
        await gateway.shutdown()
    }
}

/// A count shared by concurrent tasks.
final class Tally: Sendable {
    let value = Atomic<Int>(0)
}
