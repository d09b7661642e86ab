import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import Synchronization
import Testing
import TestSupport

/// A manifest changed under a running host loads a new instance beside the
/// old one; new calls go to the new one, calls in flight finish on the old
/// one, which is then drained and destroyed. No payment fails or is lost.
@Suite(.heavy) struct UpgradeUnderLoadTests {
    /// A gateway serving the shipped mock from a scratch folder (removed by the caller).
    static func gatewayWithTheMock(isolation: String? = nil, observer: (@Sendable (AdapterCall) -> Void)? = nil) async throws -> (PaymentGateway, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("upgrade-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"),
                                         to: manifests.appendingPathComponent("mock.json"))
        if let isolation { try ManifestText.setIsolation(manifests.appendingPathComponent("mock.json"), to: isolation) }
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        configuration.reconcileInterval = .seconds(3600)
        configuration.callObserver = observer
        return (try await PaymentGateway.open(configuration: configuration), folder)
    }

    /// Changes the mock's manifest (any change to its bytes loads a new instance).
    static func editTheMocksManifest(in folder: URL) throws {
        try ManifestText.edit(folder.appendingPathComponent("manifests/mock.json"), [(#""timeout_ms": 5000"#, #""timeout_ms": 5001"#)])
    }

    /// Upgrades the mock: its manifest names the next build (`MockAdapterNext`, version 1.1.0).
    static func upgradeTheMock(in folder: URL) throws {
        try ManifestText.edit(folder.appendingPathComponent("manifests/mock.json"), [
            (#""library": "libMockAdapter\.so""#, #""library": "libMockAdapterNext.so""#),
            (#""version": "1\.0\.0""#, #""version": "1.1.0""#),
        ])
    }

    @Test(arguments: ["in-process", "process"])
    func theMockUpgradedUnder200ConcurrentPaymentsLosesNoneShowsBothVersionsAndTheOldInstanceIsDestroyed(isolation: String) async throws {
        let versions = Mutex<[String: Int]>([:])
        let (gateway, folder) = try await Self.gatewayWithTheMock(isolation: isolation) { call in
            // Payments only: each session's creation also asks the mock for the payer's instruments.
            guard call.operation == "authorize" else { return }
            versions.withLock { $0["\(call.version) \(call.outcome)", default: 0] += 1 }
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)

        let paid = PaidCount()
        let outcomes = try await withThrowingTaskGroup(of: AttemptStatus.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let session = try await gateway.createSession(
                        NewSession(amount: Money(value: 1000 + Int64(i), currency: "SAR"), country: "SA", orderId: "up-\(i)"),
                        idempotencyKey: "up-\(i)-s")
                    let attempt = try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", provider: "mock"),
                                                            idempotencyKey: "up-\(i)-a")
                    paid.value.add(1, ordering: .relaxed)
                    return attempt.status
                }
            }
            // The upgrade (1.0.0 to 1.1.0) lands while payments are under way.
            #expect(try await waitUntil(within: .seconds(120)) { paid.value.load(ordering: .relaxed) >= 20 }, "\(paid.value.load(ordering: .relaxed)) paid; the mock: \(old.health), \(old.outstandingCalls) call(s) outstanding")
            try Self.upgradeTheMock(in: folder)
            let report = try await gateway.manifests.reload()
            #expect(report.applied == ["mock.json"] && report.refused.isEmpty, "\(report)")
            var outcomes: [AttemptStatus] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.count == 200 && outcomes.allSatisfy { $0 == .succeeded }, "\(outcomes.filter { $0 != .succeeded })")
        let new = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)
        #expect(new !== old && new.manifest.version == "1.1.0")
        // Both versions answered, every call succeeded (what adapter_calls_total{version} counts).
        let before = versions.withLock { $0 }
        #expect(before.keys.allSatisfy { $0.hasSuffix(" succeeded") } && (before["1.0.0 succeeded"] ?? 0) > 0
                && before.values.reduce(0, +) == 200, "\(before)")
        let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "after"))
        #expect(try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", provider: "mock")).status == .succeeded)
        #expect(versions.withLock { $0["1.1.0 succeeded"] ?? 0 } > 0, "\(versions.withLock { $0 })")
        // The old instance, reachable by no id now, is drained and destroyed.
        #expect(old.isolation.rawValue == isolation)
        #expect(try await waitUntil { old.isDestroyed }, "the replaced instance was never destroyed")
        if let pid = old.runner?.pid {
            #expect(try await waitUntil { !ProcessTable.isRunning(pid) }, "the old runner exited")
        }
        #expect(!new.isDestroyed && old.outstandingCalls == 0)
        await gateway.shutdown()
    }

    /// Shutdown waits for the instances an upgrade left draining, and a reload
    /// asked after it loads nothing: no runner outlives the gateway's shutdown.
    @Test func shutdownWaitsForDrainingInstancesAndALateReloadServesNothing() async throws {
        let (gateway, folder) = try await Self.gatewayWithTheMock(isolation: "process")
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)
        try Self.editTheMocksManifest(in: folder)
        #expect(try await gateway.manifests.reload().applied == ["mock.json"])
        let new = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)
        await gateway.shutdown()
        #expect(old.isDestroyed && new.isDestroyed, "shutdown returned before every instance was destroyed")

        // A reload after the shutdown (the poller's, SIGHUP's): nothing is loaded, no runner started.
        let manifest = folder.appendingPathComponent("manifests/mock.json")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"timeout_ms\": 5001", with: "\"timeout_ms\": 5002").utf8).write(to: manifest)
        #expect(try await !gateway.manifests.reload().changedAnything)
        #expect(gateway.providerRecords.first { $0.id == "mock" }?.adapter === new && new.isDestroyed)
    }

    /// The engine may pick a provider just before an upgrade and call it just
    /// after (an attempt's first commit lies between): the old instance, closed
    /// by then, refuses before anything is sent, and the call goes to the new one.
    @Test func aCallReachingTheReplacedInstanceAfterItClosedIsServedByTheNewOne() async throws {
        let (gateway, folder) = try await Self.gatewayWithTheMock()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)
        let picked = try #require(gateway.providers.provider("mock"))

        try Self.editTheMocksManifest(in: folder)
        #expect(try await gateway.manifests.reload().applied == ["mock.json"])
        #expect(try await waitUntil { old.isClosed })

        let reply = await picked.perform(.authorize(AuthorizeRequest(
            paymentId: "att_late", idempotencyKey: "att_late", amount: Money(value: 1000, currency: "SAR"),
            method: "mada", country: "SA", orderId: "late", capture: .automatic)))
        guard case .answered(let result) = reply, result.status == .succeeded else {
            Issue.record("the late call was answered \(reply)")
            return
        }
        await gateway.shutdown()
    }

    /// A manifest that turns invalid keeps its last good instance, and its id:
    /// a second file naming that id is refused as a duplicate, not loaded in
    /// its place (which used to drain and destroy the kept instance while the
    /// first file's entry still pointed at it).
    @Test func aFileKeptAtItsLastGoodStateKeepsItsIdAgainstALaterFile() async throws {
        let (gateway, folder) = try await Self.gatewayWithTheMock()
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = try #require(gateway.providerRecords.first { $0.id == "mock" }?.adapter)
        let manifests = folder.appendingPathComponent("manifests")
        let text = try String(contentsOf: manifests.appendingPathComponent("mock.json"), encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"timeout_ms\": 5000", with: "\"timeout_ms\": 5001").utf8)
            .write(to: manifests.appendingPathComponent("zz-mock.json"))
        try Data("{ \"id\": \"mock\", broken".utf8).write(to: manifests.appendingPathComponent("mock.json"))
        let report = try await gateway.manifests.reload()
        #expect(report.applied.isEmpty, "\(report)")
        #expect(report.refused.first { $0.file == "mock.json" }?.keptLastGood == true)
        #expect(report.refused.first { $0.file == "zz-mock.json" }?.reason.contains("already used") == true, "\(report.refused)")

        func pay(_ order: String) async throws -> AttemptStatus {
            let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: order))
            return try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", provider: "mock")).status
        }
        #expect(try await pay("kept-1") == .succeeded)
        #expect(gateway.providers.provider("mock") != nil && !kept.isClosed)
        // The later file goes: the kept instance still serves.
        try FileManager.default.removeItem(at: manifests.appendingPathComponent("zz-mock.json"))
        _ = try await gateway.manifests.reload()
        #expect(try await pay("kept-2") == .succeeded)
        #expect(!kept.isClosed && !kept.isDestroyed)
        await gateway.shutdown()
    }
}

private final class PaidCount: Sendable {
    let value = Atomic<Int>(0)
}
