import Dispatch
import Foundation
@_spi(Internals) import PaymentGateway
import Testing

/// Loading runs adapter code (`dlopen`'s constructors, `create`) that may
/// block. A live reload (the manifest poller, SIGHUP, the admin API) runs it
/// on a queue of its own, never on a Swift concurrency thread: two reloads
/// waiting on a slow `create` used to hold both threads of a 2-core machine,
/// and nothing else in the host could run until it returned.
@Suite struct ReloadOffThePoolTests {
    /// A gateway with no provider, and an adapter (`manifest`, in `staging`:
    /// not in the gateway's folder yet) whose create waits until the file
    /// `release` exists. The folders are removed when the last reference goes.
    static func gatewayWithASlowAdapter(shutdownGrace: Duration = .seconds(10)) async throws
        -> (gateway: PaymentGateway, folder: ManifestFolder, staging: ManifestFolder, manifest: URL, release: URL) {
        let staging = try ManifestFolder(copyShipped: false)
        let release = staging.root.appendingPathComponent("release-create")
        let manifest = try await FabricatedAdapter(id: "slow", createWaitsFor: release.path).install(in: staging, manifestName: "slow.json")
        let folder = try ManifestFolder(copyShipped: false)
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.reconcileInterval = .seconds(3600)
        configuration.shutdownGrace = shutdownGrace
        return (try await PaymentGateway.open(configuration: configuration), folder, staging, manifest, release)
    }

    @Test func reloadsWaitingOnASlowCreateHoldNoConcurrencyThread() async throws {
        let (gateway, folder, staging, manifest, release) = try await Self.gatewayWithASlowAdapter()
        defer { withExtendedLifetime(staging) {} }
        // Whatever happens, create is released in the end, from a thread that is
        // not the pool's (so the old behaviour fails the test, not hangs it).
        // Late enough that a loaded machine (the suite's first minute starves
        // every test on two cores: CI once took 55 s to get here) never
        // releases it before the check below has run.
        DispatchQueue.global().asyncAfter(deadline: .now() + 300) { FileManager.default.createFile(atPath: release.path, contents: nil) }

        try FileManager.default.copyItem(at: manifest, to: folder.manifests.appendingPathComponent("slow.json"))
        async let first = gateway.manifests.reload()
        async let second = gateway.manifests.reload()
        #expect(try await waitUntil { FileManager.default.fileExists(atPath: release.path + ".entered") }, "create never began")

        // With create blocked and a second reload waiting behind it, a task
        // that needs a concurrency thread still runs at once.
        let ranBeforeRelease = await Task.detached { !FileManager.default.fileExists(atPath: release.path) }.value
        #expect(ranBeforeRelease, "the reloads held the concurrency threads until create returned")

        FileManager.default.createFile(atPath: release.path, contents: nil)
        let reports = try await [first, second]
        // One of them loaded it; the other (whichever ran second) found nothing new.
        #expect(reports.map(\.applied).sorted { $0.count < $1.count } == [[], ["slow.json"]])
        #expect(gateway.providerRecords.map(\.id) == ["slow"] && gateway.providerRecords.first?.state == .loaded)
        await gateway.shutdown()
    }

    /// A shutdown that begins while a reload is loading an adapter waits for
    /// it, then destroys what it loaded: no adapter outlives the shutdown.
    /// A reload asked after that loads nothing.
    @Test func shutdownWaitsForAReloadInFlightAndDestroysWhatItLoaded() async throws {
        // A grace long enough that the shutdown waits for the reload however loaded the machine is.
        let (gateway, folder, staging, manifest, release) = try await Self.gatewayWithASlowAdapter(shutdownGrace: .seconds(600))
        defer { withExtendedLifetime(staging) {} }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300) { FileManager.default.createFile(atPath: release.path, contents: nil) }

        try FileManager.default.copyItem(at: manifest, to: folder.manifests.appendingPathComponent("slow.json"))
        async let loading = gateway.manifests.reload()
        #expect(try await waitUntil { FileManager.default.fileExists(atPath: release.path + ".entered") }, "create never began")
        let shutdown = Task { await gateway.shutdown() }
        #expect(try await waitUntil { gateway.manifests.isClosed }, "the shutdown did not stop reloading")
        FileManager.default.createFile(atPath: release.path, contents: nil)
        #expect(try await loading.applied == ["slow.json"])
        await shutdown.value
        let slow = try #require(gateway.providerRecords.first { $0.id == "slow" }?.adapter)
        #expect(slow.isDestroyed, "an adapter loaded by a reload in flight outlived the shutdown")
        #expect(try await !gateway.manifests.reload().changedAnything)
    }
}
