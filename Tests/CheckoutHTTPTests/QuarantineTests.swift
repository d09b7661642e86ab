import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// An isolated provider whose runner crashes too often is quarantined: out of
/// routing, visible in `GET /v1/providers`, `/metrics` and the log, until ops
/// re-enable it (disable, enable: a new instance).
///
/// Heavy: the mock runs in a runner process of its own, killed and started again.
@Suite(.heavy) struct QuarantineTests {
    static func isolatedMockWithOneCrashAllowed(_ manifests: URL) throws {
        try ManifestText.setIsolation(manifests.appendingPathComponent("mock.json"), to: "process",
                                      extraMembers: #", "limits": {"max_crashes": 1, "crash_window_s": 600}"#)
    }

    @Test func aQuarantinedProviderLeavesRoutingAndShowsUntilOpsReEnableIt() async throws {
        var folder: URL?
        // Removed once the gateway (and the runner it started) has stopped.
        defer { if let folder { try? FileManager.default.removeItem(at: folder) } }
        try await APIFixture.with(editManifests: Self.isolatedMockWithOneCrashAllowed) { fixture in
            folder = fixture.folder
            let adapter = try #require(fixture.gateway.providerRecords.first { $0.id == "mock" }?.adapter)
            let runner = try #require(adapter.runner)
            try await fixture.app().test(.router) { client in
                var mock = try #require((try await client.json(.get, "/v1/providers").json as? [[String: Any]])?.first { $0["id"] as? String == "mock" })
                #expect(mock["isolation"] as? String == "process" && mock["health"] as? String == "ready")
                #expect(mock["networkConfined"] is Bool)
                #expect((try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("q-1"))["availableMethods"] as? [String])?.contains("mada") == true)

                kill(runner.pid, SIGKILL)
                #expect(try await waitUntil(within: .seconds(60)) { adapter.health.name == "quarantined" })

                mock = try #require((try await client.json(.get, "/v1/providers").json as? [[String: Any]])?.first { $0["id"] as? String == "mock" })
                #expect(mock["health"] as? String == "quarantined")
                #expect((mock["quarantined"] as? String)?.contains("1 runner failures within 600 s") == true, "\(mock)")
                let metrics = try await client.json(.get, "/metrics").text
                #expect(metrics.contains(#"adapter_health{provider="mock"} 2"#), "\(metrics)")
                #expect(metrics.contains(#"adapter_runner_crashes{provider="mock"} 1"#))
                let session = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("q-2"))
                #expect((session["availableMethods"] as? [String])?.contains("mada") == false, "a quarantined provider is not routed to")
                #expect(fixture.logs.all.contains { $0.contains("adapter mock quarantined") })

                // Ops re-enable it: disable, then enable (a new instance, a new runner).
                try fixture.setManifest("mock.json", enabled: false)
                _ = try await fixture.gateway.manifests.reload()
                try fixture.setManifest("mock.json", enabled: true)
                _ = try await fixture.gateway.manifests.reload()
                let again = try #require(fixture.gateway.providerRecords.first { $0.id == "mock" }?.adapter)
                #expect(again !== adapter && again.health == .ready)
                let reopened = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("q-3"))
                #expect((reopened["availableMethods"] as? [String])?.contains("mada") == true)
            }
        }
    }
}
