import Foundation
import GatewayPayloads
import TestSupport
import Testing
@testable import PluginHost

/// `"isolation": "process"`: the mock in a `gateway-runner` of its own, over
/// frames, supervised.
@Suite(.heavy) struct RunnerTests {
    let folder: ManifestFolder

    init() throws {
        folder = try ManifestFolder(copyShipped: false)
    }

    /// The mock in a runner, loaded off the concurrency pool (the host waits for the runner's handshake).
    func loadIsolatedMock(_ changes: [String: Any?] = [:]) async throws -> AdapterInstance {
        var changes = changes
        changes["isolation"] = "process"
        try folder.writeMockVariant("mock.json", changes)
        let (manifests, loader) = (folder.manifests, folder.loader)
        let records = try await offThePool { try ProviderRegistry.load(directory: manifests, loader: loader) }
        let record = try #require(records[id: "mock"])
        if let failure = record.failure { Issue.record("not loaded: \(failure)") }
        return try #require(record.adapter)
    }

    static func authorize(_ scenario: String, key: String = UUID().uuidString) -> AuthorizeRequest {
        AuthorizeRequest(
            paymentId: "pay_" + key.prefix(8), idempotencyKey: key, amount: Money(value: 2500, currency: "SAR"),
            method: "mada", country: "SA", orderId: "order-1", capture: .manual,
            instrument: ["scenario": .string(scenario)], returnUrl: "https://merchant.example/back")
    }

    func runner(_ adapter: AdapterInstance) throws -> RunnerConnection {
        try #require(adapter.connection as? RunnerConnection)
    }

    @Test func theMockPaysThroughItsRunner() async throws {
        let mock = try await loadIsolatedMock()
        defer { Task { await mock.shutdown(grace: .seconds(2)) } }
        #expect(mock.isolation == .process)
        let runner = try runner(mock)
        #expect(runner.runnerPID != getpid())
        #expect(kill(runner.runnerPID, 0) == 0, "the runner is a live process")

        let authorized = try await mock.call(.authorize, Self.authorize("success"))
        #expect(authorized.status == .authorized)
        let reference = try #require(authorized.providerReference)
        let verified = try await mock.call(.verify, VerifyRequest(paymentId: "p", providerReference: reference))
        #expect(verified.status == .authorized)
        let captured = try await mock.call(.capture, AmountRequest(
            paymentId: "p", idempotencyKey: "c1", providerReference: reference, amount: Money(value: 2500, currency: "SAR")))
        #expect(captured.status == .succeeded)

        // Concurrency: 64 calls at once each resolve once.
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 {
                group.addTask { (try? await mock.call(.authorize, Self.authorize("success", key: "k\(i)")))?.status == .authorized }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(results == 64)
        #expect(mock.protocolViolations.count == 0)
    }

    /// Whether this kernel lets an unprivileged process have a network
    /// namespace of its own (then every runner must be confined).
    /// The runner has no network of its own (where the kernel refuses one, it
    /// is not started at all), and the host checks that through /proc rather
    /// than believing the runner.
    @Test func theRunnerIsNetworkConfinedAndTheHostCanSeeIt() async throws {
        let mock = try await loadIsolatedMock()
        let runner = try runner(mock)
        let mine = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        let theirs = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(runner.runnerPID)/ns/net")
        #expect(runner.network.confined, "\(runner.network)")
        #expect(runner.network.confined == (mine != theirs))
        if !runner.network.confined { #expect(runner.network.reason != nil) }
        await mock.shutdown(grace: .seconds(2))
    }

    /// `"isolation_network": "host"`: not confined, and it says why.
    @Test func aRunnerOnTheHostsNetworkSaysSo() async throws {
        let mock = try await loadIsolatedMock(["isolation_network": "host"])
        let runner = try runner(mock)
        #expect(!runner.network.confined)
        #expect(runner.network.reason?.contains("isolation_network") == true, "\(runner.network)")
        await mock.shutdown(grace: .seconds(2))
    }

    /// The runner dies with its host: the host killed with SIGKILL while a
    /// payment waits in the runner, the runner is gone too.
    @Test func aRunnerDiesWithItsHost() async throws {
        try folder.writeMockVariant("mock.json", ["isolation": "process", "timeout_ms": 60000])
        let data = folder.root.appendingPathComponent("data")
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(discard) }
        let host = try ChildProcess(BuildProducts.gateway.path,
                                    ["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "timeout",
                                     "--data", data.path, "--manifests", folder.manifests.path],
                                    standardOutput: discard, standardError: discard)
        var runnerPID: Int32?
        #expect(try await waitUntil {
            runnerPID = ProcessTable.children(of: host.pid, named: "gateway-runner").first
            return runnerPID != nil
        }, "the host never started a runner")
        let pid = try #require(runnerPID)
        host.send(SIGKILL)
        #expect(await offThePool { host.waitForExit() } == .signalled(SIGKILL))
        #expect(try await waitUntil { !ProcessTable.isRunning(pid) }, "runner \(pid) outlived its host")
    }


    /// A runner killed with a call in flight: the call is lost (outcome
    /// unknown, never a refusal that would allow failover), the runner is
    /// restarted, and the next call is served by the new one.
    @Test func aRunnerThatDiesLeavesItsCallsUnknownAndIsRestarted() async throws {
        let mock = try await loadIsolatedMock()
        defer { Task { await mock.shutdown(grace: .seconds(2)) } }
        let runner = try runner(mock)
        let first = runner.runnerPID
        async let hanging = mock.invoke(.authorize, payload: Self.authorize("timeout").jsonBytes(), timeout: .seconds(60))
        // Sent whole: from now on the runner may have acted on it.
        #expect(try await waitUntil { runner.invokesSent == 1 })
        kill(first, SIGKILL)
        let outcome = await hanging
        guard case .lost = outcome else {
            Issue.record("expected lost, got \(outcome)")
            return
        }
        #expect(try await waitUntil(within: .seconds(20)) { mock.health == .ready && runner.runnerPID != first })
        #expect(runner.crashes == 1)
        #expect(runner.restarts == 1)
        let again = try await mock.call(.authorize, Self.authorize("success"))
        #expect(again.status == .authorized)
    }

    /// A lost call is an unknown outcome to the engine's rules.
    @Test func aLostCallIsAnUnknownOutcome() {
        #expect(AdapterCallError.connectionLost("killed").outcomeUnknown)
    }

    /// Past `max_crashes` in the window the provider is quarantined: calls
    /// are refused (nothing sent) and no new runner is started.
    @Test func crashesPastTheLimitQuarantine() async throws {
        let mock = try await loadIsolatedMock(["limits": ["max_crashes": 2, "crash_window_s": 600]])
        defer { Task { await mock.shutdown(grace: .seconds(2)) } }
        let runner = try runner(mock)
        let first = runner.runnerPID
        kill(first, SIGKILL)
        #expect(try await waitUntil(within: .seconds(20)) { mock.health == .ready && runner.runnerPID != first })
        kill(runner.runnerPID, SIGKILL)
        #expect(try await waitUntil(within: .seconds(20)) {
            if case .quarantined = mock.health { return true }
            return false
        })
        let refused = await mock.invoke(.authorize, payload: Self.authorize("success").jsonBytes())
        #expect(refused == .refused(status: ABIStatus.busy.rawValue))
        #expect(runner.restarts == 1)
    }

    /// Shutdown destroys the adapter in the runner and the runner exits.
    @Test func shutdownEndsTheRunner() async throws {
        let mock = try await loadIsolatedMock()
        let runner = try runner(mock)
        let pid = runner.runnerPID
        _ = try await mock.call(.authorize, Self.authorize("success"))
        #expect(await mock.shutdown(grace: .seconds(5)))
        #expect(mock.isDestroyed)
        #expect(try await waitUntil { kill(pid, 0) != 0 }, "the runner exited and was reaped")
    }
}
