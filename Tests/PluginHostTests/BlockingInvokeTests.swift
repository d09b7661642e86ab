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
}
