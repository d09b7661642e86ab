import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing
import TestSupport

/// `plugin check` reports the adapter's peak OS threads under its 1,000
/// concurrent calls, and fails an adapter whose runner keeps a thread per
/// call (as a runtime blocked in a host service would). In process it reports
/// what the host grew by, and an in-process check's runner pass holds the
/// adapter to the bound.
@Suite(.heavy)
struct ThreadCountTests {
    func concurrency(parks: Bool, isolation: String) async throws -> ConformanceCheck.Step {
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = try await FabricatedAdapter(id: parks ? "parker" : "tidy", foreignThread: parks, parksThreads: parks)
            .install(in: folder, manifestName: "adapter.json", manifestChanges: ["isolation": isolation])
        let steps = await ConformanceCheck(loader: folder.loader, callTimeout: ConformanceCheck.suiteCallTimeout).run(manifestAt: manifest)
        let prefix = isolation == "process" ? "" : "runner:"
        return try #require(steps.first { $0.name == prefix + "concurrency" }, "\(steps)")
    }

    /// (In a runner only: in process the parked threads would stay in this process.)
    @Test func aThreadKeptPerCallFailsTheCheckWithItsCount() async throws {
        let step = try await concurrency(parks: true, isolation: "process")
        let threads = try #require(step.threads, "\(step)")
        #expect(!step.passed && threads > ConformanceCheck.maximumRunnerThreads, "\(step)")
        #expect(step.detail.contains("more than \(ConformanceCheck.maximumRunnerThreads)") && step.evidence?.first?.ok == false, "\(step.detail)")
        // What --json prints.
        let json = String(decoding: step.jsonBytes(), as: UTF8.self)
        #expect(json.contains("\"threads\":\(threads)"), "\(json)")
    }

    @Test func anAdapterThatLetsItsThreadsGoPassesWithItsCountInEachPass() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = try await FabricatedAdapter(id: "tidy").install(in: folder, manifestName: "adapter.json", manifestChanges: ["isolation": "in-process"])
        let steps = await ConformanceCheck(loader: folder.loader, callTimeout: ConformanceCheck.suiteCallTimeout).run(manifestAt: manifest)
        let runner = try #require(steps.first { $0.name == "runner:concurrency" }, "\(steps)")
        let threads = try #require(runner.threads, "\(runner)")
        #expect(runner.passed && threads > 0 && threads <= ConformanceCheck.maximumRunnerThreads, "\(runner)")
        #expect(runner.detail.contains("its runner peaked at \(threads) OS threads"), "\(runner.detail)")
        let host = try #require(steps.first { $0.name == "concurrency" }, "\(steps)")
        #expect(host.passed && host.threads != nil && host.detail.contains("the host grew by"), "\(host)")
    }
}
