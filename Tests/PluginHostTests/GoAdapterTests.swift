import Foundation
import GatewayPayloads
import Logging
import TestSupport
import Testing
@testable import PluginHost

/// A Go `c-shared` adapter (Tests/GoAdapter, built with Debian's Go from the
/// header alone) under the sandbox, unchanged: its runtime starts threads,
/// installs signal handlers, sleeps on timers, allocates and collects, on
/// goroutines of its own, and completes calls from them. Under
/// `"isolation": "process"` every layer is in force and the sandbox denies
/// it nothing; in the host's process it runs beside the Swift runtime.
@Suite(.enabled(if: GoAdapterBuild.isAvailable, "go installed (scripts/install-prerequisites installs golang-go)"), .heavy)
struct GoAdapterTests {
    static let package = BuildProducts.repository.appendingPathComponent("Tests/GoAdapter")

    @Test(arguments: [Manifest.Isolation.process, .inProcess])
    func aGoRuntimeRunsUnderTheSandboxUnchanged(_ isolation: Manifest.Isolation) async throws {
        let library = try await GoAdapterBuild.library(of: Self.package)
        let folder = try ManifestFolder(copyShipped: false)
        let manifest: [String: Any] = [
            "file_format_version": "1.2.0", "id": "go-mock", "version": "1.0.0", "enabled": true, "mode": "test",
            "library": library.path, "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
            "operations": ["authorize", "verify"], "timeout_ms": 60_000, "isolation": isolation.rawValue,
        ]
        _ = try folder.write("go-mock.json", String(decoding: try JSONSerialization.data(withJSONObject: manifest), as: UTF8.self))
        let logs = CapturedLogs()
        var loader = folder.loader
        loader.logger = logs.logger("go-adapter")
        let (manifests, configured) = (folder.manifests, loader)
        let records = try await offThePool { try ProviderRegistry.load(directory: manifests, loader: configured) }
        let record = try #require(records[id: "go-mock"])
        let adapter = try #require(record.adapter, "\(String(describing: record.failure))")

        if isolation == .process {
            let report = try #require(adapter.sandbox)
            #expect(report.layers.map(\.layer) == SandboxLayer.allCases)
            #expect(report.layers.allSatisfy { $0.inForce }, "\(report)")
        }
        // Many calls at once, each answered from a goroutine that ran more goroutines, timers and a collection.
        let results = try await withThrowingTaskGroup(of: AdapterResult.self) { group in
            for index in 0..<24 {
                group.addTask {
                    try await adapter.call(.authorize, AuthorizeRequest(
                        paymentId: "att_go_\(index)", idempotencyKey: "att_go_\(index)", amount: Money(value: 1000 + Int64(index), currency: "SAR"),
                        method: "visa", orderId: "order-\(index)"))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 24)
        #expect(results.allSatisfy { $0.status == .succeeded && $0.providerStatus == "go ok" }, "\(results)")
        #expect(Set(results.compactMap(\.providerReference)).count == 24)
        let verified = try await adapter.call(.verify, VerifyRequest(paymentId: "att_go_0", providerReference: "go:att_go_0"))
        #expect(verified.status == .succeeded && verified.providerReference == "go:att_go_0")
        await adapter.shutdown(grace: .seconds(5))

        let denied = logs.all.filter { $0.contains("the sandbox denied system call") }
        #expect(denied.isEmpty, "the Go runtime needed what the sandbox denies: \(denied)")
        #expect(logs.all.contains { $0.contains("go-mock answered on a goroutine (go1.") }, "the adapter's own log line did not arrive")
    }
}
