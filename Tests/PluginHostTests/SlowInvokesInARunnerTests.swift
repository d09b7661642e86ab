import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing
import TestSupport

/// A runner hands its frame reader's role to a new thread when an inline
/// invoke runs past 10 ms. Many slow invokes at once (threads started on a
/// starved machine, the check's 1,000 concurrent calls) are not blocked ones:
/// the runner gives up only on invokes inside the adapter for over a second.
/// Twenty invokes held at once, then released, all complete and the runner
/// lives (it used to exit at the seventeenth).
@Suite(.heavy) struct SlowInvokesInARunnerTests {
    @Test(.heavy(.shared, limit: .seconds(180)))
    func twentyInvokesHeldAtOnceAreNotTakenForBlockedOnes() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let release = folder.root.appendingPathComponent("release")
        let manifest = try await FabricatedAdapter(id: "slow", invokeWaitsFor: release.path)
            .install(in: folder, manifestName: "slow.json", manifestChanges: ["isolation": "process", "sandbox_exceptions": ["filesystem"]])
        let loader = folder.loader
        let adapter = try #require(await offThePool { ProviderRegistry.load(manifestAt: manifest, loader: loader) }.adapter)
        defer { FileManager.default.createFile(atPath: release.path, contents: nil) }
        let payload = Data(BlockingCancelTests.request.jsonBytes())
        let calls = Task {
            await withTaskGroup(of: CallOutcome.self) { group in
                for _ in 0..<20 { group.addTask { await adapter.invoke(.authorize, payload: payload, timeout: .seconds(120)) } }
                return await group.reduce(into: [CallOutcome]()) { $0.append($1) }
            }
        }
        // All twenty inside the adapter at once.
        let entered = { (try? FileManager.default.contentsOfDirectory(atPath: folder.root.path))?.filter { $0.hasPrefix("release.in-") }.count ?? 0 }
        #expect(try await waitUntil(within: .seconds(60)) { entered() == 20 }, "\(entered()) invokes reached the adapter")
        FileManager.default.createFile(atPath: release.path, contents: nil)
        let outcomes = await calls.value
        #expect(outcomes.allSatisfy { if case .completed(status: 0, _) = $0 { true } else { false } }, "\(outcomes)")
        let runner = try #require(adapter.connection as? RunnerConnection)
        #expect(runner.endsOnItsOwn == 0 && runner.crashes == 0)
        #expect(await adapter.shutdown(grace: .seconds(5)))
    }
}
