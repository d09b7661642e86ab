import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing
import TestSupport

/// An in-process adapter's `invoke` runs on the caller's thread; one that does
/// not return holds that thread, and the host can only report it: logged once
/// per call and counted in `blockedCalls` (`adapter_blocked_calls` in /metrics).
@Suite struct BlockingInvokeTests {
    @Test func anInvokeThatDoesNotReturnIsReportedOnceAndOtherAdaptersAreServed() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let release = folder.root.appendingPathComponent("release-the-invoke")
        try await FabricatedAdapter(id: "stuck", invokeWaitsFor: release.path).install(in: folder, manifestName: "stuck.json")
        try await FabricatedAdapter(id: "quiet").install(in: folder, manifestName: "quiet.json")
        let stuck = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("stuck.json"), loader: folder.loader).adapter)
        let quiet = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("quiet.json"), loader: folder.loader).adapter)
        // Whatever happens, the invoke is released in the end (so a failure here fails, not hangs).
        defer { FileManager.default.createFile(atPath: release.path, contents: nil) }
        let payload = Data(BlockingCancelTests.request.jsonBytes())

        // The blocking call runs on a thread of its own, not the test pool's.
        let thread = ThreadExecutor(name: "blocking-invoke")
        defer { thread.finish() }
        let blocked = Task(executorPreference: thread) {
            await stuck.invoke(.authorize, payload: payload, timeout: .seconds(60))
        }
        #expect(try await waitUntil { stuck.blockedCalls == 1 }, "an invoke blocked past the bound was not reported")

        // Another adapter is served meanwhile, and is not blamed.
        guard case .completed(status: 0, _) = await quiet.invoke(.authorize, payload: payload) else {
            Issue.record("quiet's call did not complete")
            return
        }
        #expect(quiet.blockedCalls == 0)

        // Released, the call completes as usual, and was counted once.
        FileManager.default.createFile(atPath: release.path, contents: nil)
        guard case .completed(status: 0, _) = await blocked.value else {
            Issue.record("the released call did not complete")
            return
        }
        #expect(stuck.blockedCalls == 1)
        #expect(await stuck.shutdown(grace: .seconds(5)))
        #expect(await quiet.shutdown(grace: .seconds(5)))
    }

    /// An adapter may complete a call before its invoke returns. Shutting the
    /// instance down (an upgrade drains the old one) must not destroy it while
    /// that invoke is still running in it: the adapter would go on in freed memory.
    @Test func anInstanceIsNotDestroyedWhileAnInvokeThatAlreadyCompletedIsStillRunning() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let release = folder.root.appendingPathComponent("let-invoke-return")
        try await FabricatedAdapter(id: "late", invokeReturnsAfter: release.path).install(in: folder, manifestName: "late.json")
        let late = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("late.json"), loader: folder.loader).adapter)
        defer { FileManager.default.createFile(atPath: release.path, contents: nil) }
        let payload = Data(BlockingCancelTests.request.jsonBytes())
        let thread = ThreadExecutor(name: "late-invoke")
        defer { thread.finish() }
        let call = Task(executorPreference: thread) { await late.invoke(.authorize, payload: payload) }
        #expect(try await waitUntil { late.outstandingCalls == 0 && (late.connection as? InProcessConnection)?.invokes.isRunning == true }, "the call did not complete inside invoke")
        // Completed, nothing outstanding, but invoke has not returned: not destroyed.
        #expect(await late.shutdown(grace: .milliseconds(100)) == false)
        #expect(!late.isDestroyed)
        FileManager.default.createFile(atPath: release.path, contents: nil)
        guard case .completed(status: 0, _) = await call.value else {
            Issue.record("the call did not complete")
            return
        }
    }
}
