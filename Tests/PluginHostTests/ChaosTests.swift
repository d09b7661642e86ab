import Foundation
import GatewayPayloads
import Logging
import TestSupport
import Testing
@testable import PluginHost

/// The chaos adapter (Tests/ChaosAdapter) misbehaves on request. Under
/// `"isolation": "process"` every case leaves the host serving the other
/// provider (the mock, in process, beside it), and each call ends as the money
/// rules say: a crash or a hang is an unknown outcome, never a refusal that
/// would allow failover. In process, only the cases that can be contained are
/// run (docs/plugin-authors.md says which cannot).
@Suite(.serialized, .heavy) struct ChaosTests {
    static var probe: String { ChaosFixture.probe }

    // MARK: Only process isolation contains these

    @Test(arguments: ["segfault", "abort", "exit"])
    func aCrashInInvokeIsLostAndRestarted(_ crash: String) async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        let outcome = await suite.call(crash, timeout: .seconds(30))
        guard case .lost(let reason) = outcome else {
            Issue.record("\(crash): expected lost, got \(outcome)")
            return
        }
        #expect(reason.contains(crash == "exit" ? "exited with status 7" : crash == "segfault" ? "SIGSEGV" : "SIGABRT"), "\(reason)")
        #expect(try AdapterCallError.connectionLost(reason).outcomeUnknown)
        try await suite.othersStillServed()
        #expect(suite.runner?.crashes == 1)
        await suite.shutdown()
    }

    @Test func anInvokeThatNeverReturnsTimesOutAndItsRunnerIsKilled() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        #expect(await suite.call("loop") == .timedOut)
        #expect(try await waitUntil(within: .seconds(20)) { suite.runner?.crashes == 1 }, "killed after the cancel grace")
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    /// The runner calls invoke inline on its reader; one that does not return
    /// hands the reader's role to a new thread, so the runner goes on serving.
    @Test func anInvokeThatNeverReturnsDoesNotStopTheRunnersOtherCalls() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        let runner = try #require(suite.runner)
        let chaos = suite.chaos
        async let stuck = chaos.invoke(.authorize, payload: Data(#"{"chaos":"loop"}"#.utf8), timeout: .seconds(60))
        #expect(try await waitUntil { runner.invokesSent == 1 })
        #expect(await suite.call("ok", timeout: .seconds(30)) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        #expect(runner.crashes == 0, "served by the same runner")
        await suite.shutdown()
        guard case .cancelled = await stuck else { Issue.record("the stuck call ended otherwise"); return }
    }

    @Test func aCancelThatBlocksGetsTheRunnerKilledAfterItsGrace() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, sandboxExceptions: ["filesystem"])
        // Never released: the runner is killed instead.
        let release = try suite.releaseFIFO()
        #expect(await suite.call("block_cancel", extra: #","release":"\#(release.path)""#) == .timedOut)
        #expect(try await waitUntil(within: .seconds(20)) { suite.runner?.crashes == 1 })
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    @Test func aCallNeverCompletedTimesOutUnknownAndItsRunnerIsKilled() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        #expect(await suite.call("never") == .timedOut)
        #expect(try await waitUntil(within: .seconds(20)) { suite.runner?.crashes == 1 })
        #expect(suite.chaos.outstandingCalls == 0)
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    /// The isolated adapter's environment holds nothing of the host's (in
    /// process it shares it): it gets its secret only through `secret_get`.
    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func anIsolatedAdapterSeesNoHostEnvironmentButGetsItsSecret(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        let variable = try #require(ProcessInfo.processInfo.environment.first { key, value in
            !value.isEmpty && value.count < 200 && value.allSatisfy { $0.isASCII && !$0.isNewline && $0 != "\"" && $0 != "\\" }
                && !["PATH", "LANG", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "GATEWAY_SANDBOX_STATE"].contains(key) && !key.hasPrefix("LC_")
        })
        let result = try await suite.chaos.call(.authorize, ChaosRequest(chaos: "env", name: variable.key))
        let seen = isolation == .process ? "(unset)" : variable.value
        #expect(result.providerStatus == "\(seen)|\(Self.probe)")
        await suite.shutdown()
    }

    /// Native code in a confined runner cannot reach even the host's loopback
    /// (it cannot open a socket at all); with `"isolation_network": "host"`
    /// (the network layer excepted) it can.
    @Test(arguments: [false, true])
    func aConfinedRunnerCannotOpenASocket(_ hostNetwork: Bool) async throws {
        let suite = try await ChaosFixture.make(isolation: .process, members: hostNetwork ? ["isolation_network": "host"] : [:])
        let listener = try LoopbackListener()
        let result = try await suite.chaos.call(.authorize, ChaosRequest(chaos: "connect", port: listener.port))
        #expect(suite.runner?.network.confined == !hostNetwork)
        #expect(result.providerStatus == (hostNetwork ? "connected0" : "failed:\(EPERM)"), "\(result.providerStatus ?? "")")
        await suite.shutdown()
    }

    /// The manifest's limits bind the runner: memory (RLIMIT_DATA) and open files.
    @Test func theRunnersLimitsHold() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, limits: ["memory_mb": 256, "open_files": 64])
        #expect(try await suite.chaos.call(.authorize, ChaosRequest(chaos: "alloc", mb: 32)).providerStatus == "allocated")
        #expect(try await suite.chaos.call(.authorize, ChaosRequest(chaos: "alloc", mb: 512)).providerStatus == "refused")
        let files = try await suite.chaos.call(.authorize, ChaosRequest(chaos: "files", count: 200)).providerStatus ?? ""
        let opened = Int(files.dropFirst("opened:".count)) ?? -1
        #expect(opened > 0 && opened < 64, "\(files)")
        #expect(suite.runner?.crashes == 0)
        await suite.shutdown()
    }

    /// `cpu_seconds_per_call`: a call that spins well inside its deadline
    /// and its cancel grace is stopped by its CPU budget.
    @Test func aRunnerOverItsCPUBudgetIsKilled() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, limits: ["cpu_seconds_per_call": 1, "cancel_grace_ms": 600_000], timeout: 600_000)
        let outcome = await suite.call("loop", timeout: .seconds(600))
        guard case .lost(let reason) = outcome else {
            Issue.record("expected lost, got \(outcome)")
            return
        }
        #expect(reason.contains("CPU per call"), "\(reason)")
        #expect(suite.runner?.crashes == 1)
        await suite.shutdown()
    }

    // MARK: Both isolations

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func aSecondCompletionIsAViolationAndTheFirstStands(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        #expect(await suite.call("twice", timeout: ChaosFixture.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        #expect(try await waitUntil { suite.chaos.protocolViolations.count == 1 })
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func garbageIsAMalformedResultNeverASuccess(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        do {
            _ = try await suite.chaos.call(.authorize, ChaosRequest(chaos: "garbage"))
            Issue.record("garbage decoded")
        } catch {
            guard case .malformedResult = error else { Issue.record("\(error)"); return }
            #expect(error.outcomeUnknown)
        }
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func aHugeResultIsRefusedAsUnknown(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        let outcome = await suite.call("huge", timeout: .seconds(30))
        guard case .completed(let status, let document) = outcome else { Issue.record("\(outcome)"); return }
        #expect(status == ABIStatus.outcomeUnknown.rawValue)
        #expect(document.count < 1000)
        #expect(String(decoding: document, as: UTF8.self).contains("exceeds the host's limit"))
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func aCallNeverCompletedIsUnknown(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        #expect(await suite.call("never") == .timedOut)
        if isolation == .process {
            #expect(try await waitUntil(within: .seconds(20)) { suite.runner?.crashes == 1 }, "killed after the cancel grace")
        }
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    /// In process a blocking cancel is reported (and only delays that
    /// adapter's own later cancels); the mock keeps being served.
    @Test func aBlockingCancelInProcessIsReportedAndContained() async throws {
        let suite = try await ChaosFixture.make(isolation: .inProcess)
        let release = try suite.releaseFIFO()
        #expect(await suite.call("block_cancel", extra: #","release":"\#(release.path)""#) == .timedOut)
        #expect(try await waitUntil(within: .seconds(20)) { suite.chaos.blockedCalls == 1 })
        try await suite.othersStillServed()
        // Released, its cancel completes the call; shutdown waits for that.
        let writer = open(release.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(writer >= 0, "the cancel is not waiting on its FIFO")
        close(writer)
        #expect(await suite.chaos.shutdown(grace: .seconds(10)))
        await suite.mock.shutdown(grace: .seconds(2))
    }

    /// An http_send's callback can outlive the adapter's last completion (it
    /// may complete from inside the callback, or, as here, before its answer
    /// came): destroy waits until the callback returned. The chaos adapter
    /// says (its verdict file) if destroy ran while a callback was running,
    /// or a callback started after destroy.
    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func destroyWaitsForAnHTTPCallbackThatOutlivesTheLastCompletion(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation, sandboxExceptions: ["filesystem"])
        let entered = suite.folder.root.appendingPathComponent("entered"), verdict = suite.folder.root.appendingPathComponent("verdict")
        let release = try suite.releaseFIFO()
        let files = #","entered":"\#(entered.path)","release":"\#(release.path)","verdict":"\#(verdict.path)""#
        #expect(await suite.call("http_after_complete", extra: files, timeout: ChaosFixture.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        #expect(suite.chaos.outstandingCalls == 0, "no completion owed")
        #expect(try await waitUntil(within: .seconds(30)) { FileManager.default.fileExists(atPath: entered.path) }, "the callback runs, held")
        let chaos = suite.chaos
        let stopping = Task { await chaos.shutdown(grace: .seconds(30)) }
        // Shutdown reached the callbacks (or, wrongly, destroyed the instance
        // under one); a runner was sent DESTROY, and waits for its callback.
        let runner = suite.runner
        #expect(try await waitUntil(within: .seconds(30)) {
            (chaos.reachedCallbacks.load(ordering: .acquiring) && (runner?.destroyRequested ?? true)) || chaos.isDestroyed
        })
        let released = try await waitUntil(within: .seconds(30)) {
            let writer = open(release.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            guard writer >= 0 else { return false }
            close(writer)
            return true
        }
        #expect(released, "the callback is not waiting on its FIFO")
        #expect(await stopping.value, "destroyed once the callback returned")
        #expect(!FileManager.default.fileExists(atPath: verdict.path), "destroy ran while an http_send callback had not returned")
        await suite.mock.shutdown(grace: .seconds(2))
    }

    /// The host's shutdown bound passed (the shutdown task cancelled) while
    /// a call is still owed: the instance is given up at once, never
    /// destroyed, and the shutdown does not spin out its grace periods.
    @Test(.heavy(.shared, limit: .seconds(120)), arguments: [Manifest.Isolation.inProcess, .process])
    func aShutdownCutShortGivesTheInstanceUpAtOnce(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        let chaos = suite.chaos
        let stuck = Task { await chaos.invoke(.authorize, payload: Data(#"{"chaos":"never"}"#.utf8), timeout: .seconds(600)) }
        #expect(try await waitUntil(within: .seconds(30)) { chaos.outstandingCalls == 1 })
        let stopping = Task { await chaos.shutdown(grace: .seconds(600)) }
        stopping.cancel()
        #expect(await stopping.value == false)
        #expect(!chaos.isDestroyed)
        let outcome = await stuck.value
        #expect(outcome == .cancelled || { if case .lost = outcome { return true }; return false }(), "\(outcome)")
        await suite.mock.shutdown(grace: .seconds(2))
    }

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func aHostServiceCalledAfterDestroyHarmsNothing(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation, sandboxExceptions: ["filesystem"])
        let marker = suite.folder.root.appendingPathComponent("after-destroy")
        #expect(await suite.call("after_destroy", extra: #","marker":"\#(marker.path)""#, timeout: ChaosFixture.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        #expect(await suite.chaos.shutdown(grace: .seconds(5)))
        if isolation == .inProcess {
            #expect(try await waitUntil { FileManager.default.fileExists(atPath: marker.path) }, "the late call was made, and survived")
        } else if let pid = suite.runner?.runnerPID {
            #expect(try await waitUntil { !ProcessTable.isRunning(pid) }, "the runner exits after destroy")
        }
        let paid = try await suite.mock.call(.authorize, RunnerTests.authorize("success"))
        #expect(paid.status == .authorized)
        await suite.mock.shutdown(grace: .seconds(2))
    }
}

/// A request the chaos adapter reads (it looks only for its members).
struct ChaosRequest: JSONPayload {
    var chaos: String
    var port: Int? = nil
    var name: String? = nil
    var mb: Int? = nil
    var count: Int? = nil

    init(chaos: String, port: Int? = nil, name: String? = nil, mb: Int? = nil, count: Int? = nil) {
        self.chaos = chaos
        self.port = port
        self.name = name
        self.mb = mb
        self.count = count
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("chaos", chaos)
        writer.member("port", port)
        writer.member("name", name)
        writer.member("mb", mb)
        writer.member("count", count)
        writer.endObject()
    }

    init(parsing parser: inout JSONParser) throws(JSONParseError) {
        throw parser.error("only written")
    }
}

/// A TCP listener on 127.0.0.1 (the host's loopback), for the connect case.
final class LoopbackListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// One chaos adapter beside an in-process mock, loaded from a scratch folder.
struct ChaosFixture {
    static let probe = "chaos-probe-\(UUID().uuidString.prefix(8))"

    let folder: ManifestFolder
    let chaos: AdapterInstance
    let mock: AdapterInstance

    /// The deadline of a call the test expects an answer to: a backstop, not
    /// the chaos manifest's 300 ms, which only the calls meant to time out use.
    static let answered: Duration = .seconds(30).scaled

    /// The fixture, its adapters loaded off the concurrency pool (an isolated
    /// one waits for its runner to start).
    ///
    /// `sandboxExceptions`: the layers an isolated chaos adapter runs without.
    /// The cases that meet the test through files in the test's folder (a
    /// FIFO, a marker) need `["filesystem"]`: its own root holds none of them.
    static func make(isolation: Manifest.Isolation, limits: [String: Any] = [:], timeout: Int = 300,
                     sandboxExceptions: [String] = [], simulatedRefusals: String? = nil, logger: Logger? = nil,
                     members: [String: Any] = [:]) async throws -> ChaosFixture {
        let (folder, records) = try await load(isolation: isolation, limits: limits, timeout: timeout, sandboxExceptions: sandboxExceptions,
                                               simulatedRefusals: simulatedRefusals, logger: logger, members: members)
        for record in records where record.failure != nil { Issue.record("\(record.id): \(record.failure!)") }
        return ChaosFixture(folder: folder, chaos: try #require(records[id: "chaos"]?.adapter), mock: try #require(records[id: "mock"]?.adapter))
    }

    /// The fixture's folder and what loading it gave, failures included.
    /// `simulatedRefusals`: ``AdapterLoader/simulatedSandboxRefusals``.
    static func load(isolation: Manifest.Isolation, limits: [String: Any] = [:], timeout: Int = 300,
                     sandboxExceptions: [String] = [], simulatedRefusals: String? = nil, logger: Logger? = nil,
                     members: [String: Any] = [:]) async throws -> (ManifestFolder, [ProviderRecord]) {
        let folder = try ManifestFolder(copyShipped: false)
        try write(into: folder, isolation: isolation, limits: limits, timeout: timeout,
                  changes: members.merging(isolation == .process && !sandboxExceptions.isEmpty ? ["sandbox_exceptions": sandboxExceptions] : [:]) { $1 })
        var loader = folder.loader
        loader.simulatedSandboxRefusals = simulatedRefusals
        if let logger { loader.logger = logger }
        let (manifests, configured) = (folder.manifests, loader)
        let records = try await offThePool { try ProviderRegistry.load(directory: manifests, loader: configured) }
        return (folder, records)
    }

    private init(folder: ManifestFolder, chaos: AdapterInstance, mock: AdapterInstance) {
        self.folder = folder
        self.chaos = chaos
        self.mock = mock
    }

    private static func write(into folder: ManifestFolder, isolation: Manifest.Isolation, limits: [String: Any], timeout: Int,
                              changes: [String: Any]) throws {
        let secret = folder.root.appendingPathComponent("probe-secret")
        try Data(Self.probe.utf8).write(to: secret)
        try folder.writeMockVariant("mock.json", ["isolation": "in-process"])
        var manifest: [String: Any] = [
            "file_format_version": "1.1.0", "id": "chaos", "version": "1.0.0", "enabled": true, "mode": "test",
            "library": BuildProducts.directory.appendingPathComponent("libChaosAdapter.so").path,
            "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
            "operations": ["authorize", "verify"], "timeout_ms": timeout,
            "secrets": ["probe": "file:\(secret.path)"], "isolation": isolation.rawValue,
        ]
        if isolation == .process {
            manifest["limits"] = ["cancel_grace_ms": 100, "max_crashes": 1000].merging(limits) { $1 }
        }
        manifest.merge(changes) { $1 }
        try folder.write("chaos.json", String(decoding: JSONSerialization.data(withJSONObject: manifest), as: UTF8.self))
    }

    func call(_ chaos: String, extra: String = "", timeout: Duration? = nil) async -> CallOutcome {
        await self.chaos.invoke(.authorize, payload: Data(#"{"chaos":"\#(chaos)"\#(extra)}"#.utf8), timeout: timeout)
    }

    /// The other provider answers, and the chaos adapter too once it is back.
    func othersStillServed(chaosBack: Bool = true) async throws {
        let paid = try await mock.call(.authorize, RunnerTests.authorize("success"))
        #expect(paid.status == .authorized)
        if chaosBack {
            #expect(try await waitUntil(within: .seconds(20)) { chaos.health == .ready })
            #expect(await call("ok", timeout: Self.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        }
    }

    func shutdown() async {
        await chaos.shutdown(grace: .seconds(2))
        await mock.shutdown(grace: .seconds(2))
    }

    var runner: RunnerConnection? { chaos.connection as? RunnerConnection }

    /// A FIFO the `block_cancel` case's cancel waits on until a writer opens it.
    func releaseFIFO() throws -> URL {
        let url = folder.root.appendingPathComponent("release-\(UUID().uuidString.prefix(6))")
        guard mkfifo(url.path, 0o600) == 0 else { throw POSIXError(.EEXIST) }
        return url
    }
}
