import Foundation
import GatewayPayloads
import Logging
import TestSupport
import Testing
@testable import PluginHost

/// An isolated adapter gets nothing it was not given. The chaos adapter
/// attacks from inside its runner (its `attack` cases, Tests/ChaosAdapter),
/// the way the hostile adapter of issue 33 did; each attack is blocked, and
/// the host keeps serving the provider beside it.
@Suite(.heavy) struct SandboxTests {
    /// What one attack came to (the chaos adapter's providerStatus).
    static func attack(_ suite: ChaosFixture, _ name: String, _ fields: [String: Any] = [:]) async -> String {
        var request: [String: Any] = ["chaos": "attack", "attack": name]
        request.merge(fields) { $1 }
        let payload = (try? JSONSerialization.data(withJSONObject: request, options: [.withoutEscapingSlashes])) ?? Data()
        let outcome = await suite.chaos.invoke(.authorize, payload: payload, timeout: ChaosFixture.answered)
        guard case .completed(0, let document) = outcome,
              let answer = (try? JSONSerialization.jsonObject(with: document)) as? [String: Any],
              let status = answer["providerStatus"] as? String
        else { return "no answer: \(outcome)" }
        return status
    }

    static func failed(_ code: Int32) -> String { "failed:\(code)" }

    @Test func everyLayerIsInForceAndTheHostSawItThroughProc() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        let report = try #require(suite.chaos.sandbox)
        #expect(report.layers.map(\.layer) == SandboxLayer.allCases)
        #expect(report.layers.allSatisfy { $0.inForce }, "\(report)")
        #expect(report.description.hasPrefix("network, filesystem, pid, ipc, syscalls, landlock in force; "), "\(report)")
        await suite.shutdown()
    }

    /// The manifests, the data folder, the library store, other adapters'
    /// secrets: none of it is there to read or write. Its root holds the
    /// system's libraries read-only and a /tmp of its own.
    @Test func theHostsFilesAreOutOfSight() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        let manifest = suite.folder.manifests.appendingPathComponent("chaos.json").path
        let secret = suite.folder.root.appendingPathComponent("probe-secret").path
        #expect(await Self.attack(suite, "read", ["path": manifest]) == Self.failed(ENOENT))
        #expect(await Self.attack(suite, "read", ["path": secret]) == Self.failed(ENOENT))
        #expect(await Self.attack(suite, "list", ["path": suite.folder.store.path]) == Self.failed(ENOENT))

        // Writing the manifests folder (which the host live-reloads) or the system's libraries.
        let forged = suite.folder.manifests.appendingPathComponent("forged.json").path
        #expect(await Self.attack(suite, "write", ["path": forged]).hasPrefix("failed:"))
        #expect(!FileManager.default.fileExists(atPath: forged))
        #expect(await Self.attack(suite, "write", ["path": "/usr/lib/forged.so"]) == Self.failed(EROFS))
        #expect(await Self.attack(suite, "write", ["path": "/forged"]) == Self.failed(EROFS))
        #expect(await Self.attack(suite, "write", ["path": "/dev/forged"]) == Self.failed(EROFS))

        let root = Set(await Self.attack(suite, "list", ["path": "/"]).split(separator: ",").map(String.init))
        let allowed: Set = ["bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc", "tmp", "opt"]
        #expect(root.isSubset(of: allowed) && root.isSuperset(of: ["usr", "proc", "tmp", "dev"]), "its root: \(root.sorted())")
        #expect(await Self.attack(suite, "list", ["path": "/etc"]).split(separator: ",").allSatisfy { ["ld.so.cache", "localtime"].contains($0) })
        #expect(await Self.attack(suite, "write", ["path": "/tmp/scratch"]) == "written", "its own /tmp is writable")
        // Its /proc holds its own namespace's processes only: init, itself.
        let processes = await Self.attack(suite, "list", ["path": "/proc"]).split(separator: ",").compactMap { Int($0) }
        #expect(processes.allSatisfy { $0 < 100 } && processes.contains(1), "\(processes)")
        try await suite.othersStillServed()
        await suite.shutdown()
    }

    /// The host, other runners, local services: out of reach. Each denied
    /// call fails (EPERM) and is logged with its name, never a silent kill.
    @Test func otherProcessesAndSocketsAreOutOfReach() async throws {
        let logs = CapturedLogs()
        let suite = try await ChaosFixture.make(isolation: .process, logger: logs.logger("sandbox"))
        let host = getpid()
        #expect(await Self.attack(suite, "kill", ["pid": host]) == Self.failed(ESRCH), "the host is not in its PID namespace")
        #expect(await Self.attack(suite, "ptrace", ["pid": host]) == Self.failed(EPERM))
        #expect(await Self.attack(suite, "vm_read", ["pid": host]) == Self.failed(EPERM))
        #expect(await Self.attack(suite, "unix", ["path": "/var/run/postgresql/.s.PGSQL.5432"]) == Self.failed(EPERM))
        #expect(await Self.attack(suite, "exec") == Self.failed(EPERM))
        #expect(await Self.attack(suite, "unshare") == Self.failed(EPERM))
        #expect(await Self.attack(suite, "orphan", ["name": "gwo-denied"]) == Self.failed(EPERM), "an adapter starts threads, never processes")
        #expect(await Self.attack(suite, "shm") == Self.failed(EPERM), "shared memory past memory_mb")
        // Its namespace's init: not writable through /proc (read-only, and init is not dumpable).
        #expect(await Self.attack(suite, "write", ["path": "/proc/1/mem"]).hasPrefix("failed:"))
        try await suite.othersStillServed()
        let denied = try await waitUntil {
            let text = logs.all.joined(separator: "\n")
            return ["ptrace", "process_vm_readv", "socket", "execve", "unshare", "clone", "mmap"].allSatisfy { text.contains("denied system call") && text.contains("(\($0))") }
        }
        #expect(denied, "the log names each denied call: \(logs.all.filter { $0.contains("denied") })")
        #expect(ProcessTable.isRunning(host))
        await suite.shutdown()
    }

    /// With the host's network (`"isolation_network": "host"`) the root
    /// carries what resolving names and checking certificates read (the file
    /// /etc/resolv.conf names when it is a link); without, none of it.
    @Test(arguments: [false, true])
    func whatResolvingNamesNeedsIsThereOnlyWithTheHostsNetwork(_ hostNetwork: Bool) async throws {
        let suite = try await ChaosFixture.make(isolation: .process, members: hostNetwork ? ["isolation_network": "host"] : [:])
        for file in ["/etc/resolv.conf", "/etc/hosts"] where FileManager.default.fileExists(atPath: file) {
            #expect(await Self.attack(suite, "read", ["path": file]) == (hostNetwork ? "opened" : Self.failed(ENOENT)), "\(file)")
        }
        await suite.shutdown()
    }

    /// A grandchild in a session of its own (setsid) ends with the runner:
    /// the runner's PID namespace ends when its init does. (With the syscalls
    /// layer an adapter cannot start a process at all; without it, this layer
    /// still holds.)
    @Test func aProcessTheAdapterStartsEndsWithItsRunner() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, sandboxExceptions: ["syscalls"])
        let name = "gwo-\(UUID().uuidString.prefix(8))"
        #expect(await Self.attack(suite, "orphan", ["name": name]) == "started")
        #expect(try await waitUntil { ProcessTable.named(name).count == 1 }, "the grandchild runs")
        let runner = try #require(suite.runner?.runnerPID)
        #expect(await suite.chaos.shutdown(grace: .seconds(5)))
        #expect(try await waitUntil { !ProcessTable.isRunning(runner) })
        #expect(ProcessTable.named(name).isEmpty, "it outlived its runner: \(ProcessTable.named(name))")
        await suite.mock.shutdown(grace: .seconds(2))
    }

    /// Where the kernel refuses a layer (simulated), the adapter does not
    /// start unless its manifest names the layer; the message names both.
    @Test(arguments: [
        ("pid", ["filesystem", "pid"]),
        ("user", ["network", "filesystem", "pid", "ipc"]),
        ("syscalls", ["syscalls"]),
        ("network", ["network"]),
        ("landlock", ["landlock"]),
    ])
    func aLayerTheKernelRefusesKeepsTheAdapterFromStarting(_ refused: String, _ missing: [String]) async throws {
        let (_, records) = try await ChaosFixture.load(isolation: .process, simulatedRefusals: refused)
        let failure = try #require(records[id: "chaos"]?.failure, "the adapter started without \(refused)")
        #expect(failure == .sandboxIncomplete(layers: missing, detail: (failure.sandboxDetail ?? "")), "\(failure)")
        let member = "\"sandbox_exceptions\": [\(missing.map { "\"\($0)\"" }.joined(separator: ", "))]"
        #expect(failure.description.contains(member), "\(failure)")
        #expect(failure.description.contains("simulated"), "\(failure)")
        #expect(records[id: "mock"]?.adapter != nil, "the others load")
        for record in records { await record.adapter?.shutdown(grace: .seconds(2)) }

        // Named in the manifest: it runs, and says what it runs without.
        let suite = try await ChaosFixture.make(isolation: .process, sandboxExceptions: missing, simulatedRefusals: refused)
        let report = try #require(suite.chaos.sandbox)
        for layer in report.layers {
            #expect(layer.inForce == !missing.contains(layer.layer.rawValue), "\(report)")
        }
        #expect(report.layers.filter { !$0.inForce }.allSatisfy { $0.reason?.contains("sandbox_exceptions") == true }, "\(report)")
        #expect(await suite.call("ok", timeout: ChaosFixture.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)))
        await suite.shutdown()
    }

    /// Landlock holds behind the other layers: with the pid and filesystem
    /// layers excepted, the host is in sight, yet a signal to it is refused
    /// (Landlock's signal scope, ABI 6). SIGWINCH, which a process ignores
    /// unless it asks for it, so that a failure here is a failed test, not
    /// a killed one.
    @Test(.enabled(if: (SandboxLayer.landlockABI ?? 0) >= 6, "a kernel with Landlock ABI 6 (signal scoping)"))
    func withThePIDLayerExceptedLandlockStillKeepsSignalsIn() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, sandboxExceptions: ["filesystem", "pid"])
        let report = try #require(suite.chaos.sandbox)
        #expect(report[.landlock].inForce && !report[.pid].inForce, "\(report)")
        #expect(await Self.attack(suite, "kill", ["pid": getpid(), "signal": SIGWINCH]) == Self.failed(EPERM))
        try await suite.othersStillServed()
        await suite.shutdown()

        // The same, Landlock excepted too: the signal goes (the test above is not vacuous).
        let bare = try await ChaosFixture.make(isolation: .process, sandboxExceptions: ["filesystem", "pid", "landlock"])
        #expect(await Self.attack(bare, "kill", ["pid": getpid(), "signal": SIGWINCH]) == "sent")
        await bare.shutdown()
    }

    /// What runs is the sealed copy of the bytes the host checked: patching
    /// the content-addressed copy in place (as the hostile adapter of issue
    /// 33 did) changes nothing, in process or in a restarted runner.
    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func patchingTheLibraryCopyChangesNothingThatRuns(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        let copy = suite.chaos.libraryPath
        chmod(copy, 0o644)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int)
        try Data(repeating: 0xCC, count: size).write(to: URL(fileURLWithPath: copy))
        let ok = CallOutcome.completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8))
        #expect(await suite.call("ok", timeout: ChaosFixture.answered) == ok)
        if isolation == .process, let runner = suite.runner {
            kill(runner.runnerPID, SIGKILL)
            #expect(try await waitUntil(within: .seconds(60)) { runner.restarts == 1 && suite.chaos.health == .ready }, "restarted")
            #expect(await suite.call("ok", timeout: ChaosFixture.answered) == ok, "the restarted runner maps the sealed bytes")
        }
        await suite.shutdown()
    }
}

extension LoadFailure {
    /// The detail of a `.sandboxIncomplete`, for comparing the layers alone.
    var sandboxDetail: String? {
        if case .sandboxIncomplete(_, let detail) = self { return detail }
        return nil
    }
}
