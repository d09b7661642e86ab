import Foundation
import GatewayPayloads
import Logging
import TestSupport
import Testing
@testable import PluginHost

/// The runner's side of the socket is adapter-controlled: the host believes
/// nothing it says and survives anything it sends. A fake runner (a Python
/// script speaking the frames, set as the loader's runner) misbehaves on cue.
@Suite(.heavy) struct HostileRunnerTests {
    let folder: ManifestFolder

    init() throws {
        folder = try ManifestFolder(copyShipped: false)
        let manifest: [String: Any] = [
            "file_format_version": "1.1.0", "id": "fake", "version": "1.0.0", "enabled": true, "mode": "test",
            "library": BuildProducts.directory.appendingPathComponent("libChaosAdapter.so").path,
            "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
            "operations": ["authorize"], "timeout_ms": 2000, "isolation": "process",
            // A Python fake builds no sandbox: these tests are about the protocol, so every layer is excepted.
            "sandbox_exceptions": ["network", "filesystem", "pid", "ipc", "syscalls", "landlock"],
            "limits": ["max_crashes": 1],
        ]
        try folder.write("fake.json", String(decoding: JSONSerialization.data(withJSONObject: manifest), as: UTF8.self))
    }

    /// The script's common part: frame helpers, LOAD read, a valid READY.
    static let prelude = #"""
    #!/usr/bin/env python3
    import json, os, struct, sys
    FD = 3
    def read_exact(n):
        data = b''
        while len(data) < n:
            chunk = os.read(FD, n - len(data))
            if not chunk:
                sys.exit(0)
            data += chunk
        return data
    def read_frame():
        length, kind, flags, _, ident = struct.unpack('<IBBHQ', read_exact(16))
        return kind, ident, read_exact(length)
    def send(kind, ident=0, body=b'', length=None):
        os.write(FD, struct.pack('<IBBHQ', len(body) if length is None else length, kind, 0, 0, ident) + body)
    kind, _, body = read_frame()
    load = json.loads(body)
    ready = {"protocol": load["protocol"], "cookie": os.environ["GATEWAY_RUNNER_COOKIE"], "abiMajor": 1, "abiMinor": 0,
             "sha256": load["sha256"], "pid": 1,
             "description": {"id": "fake", "version": "1.0.0", "methods": ["visa"], "operations": ["authorize"]},
             "sandbox": [{"layer": l, "inForce": True, "excepted": False}
                         for l in ["network", "filesystem", "pid", "ipc", "syscalls", "landlock"]]}
    def send_ready(changes={}):
        send(0x02, 0, json.dumps({**ready, **changes}).encode())

    """#

    /// Loads the manifest with `script` as its runner, off the concurrency
    /// pool (the host waits for the runner's handshake).
    func load(_ script: String, logger: Logger? = nil) async throws -> ProviderRecord {
        let url = folder.root.appendingPathComponent("fake-runner-\(UUID().uuidString.prefix(6)).py")
        // Written through a close-on-exec descriptor: a child started meanwhile
        // must not inherit it (exec of a file open for writing fails: ETXTBSY).
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        #expect(fd >= 0)
        let bytes = Array((Self.prelude + script).utf8)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        close(fd)
        var loader = folder.loader
        loader.runnerExecutable = url.path
        if let logger { loader.logger = logger }
        let (manifests, configured) = (folder.manifests, loader)
        let records = try await offThePool { try ProviderRegistry.load(directory: manifests, loader: configured) }
        return try #require(records.first { $0.id == "fake" })
    }

    func refusal(_ script: String) async throws -> LoadFailure? {
        let record = try await load(script)
        #expect(record.adapter == nil)
        return record.failure
    }

    @Test func aFrameLongerThanTheLimitIsRefused() async throws {
        let failure = try await refusal("send(0x02, 0, b'', length=0xFFFFFFF0)\nwhile True:\n    read_frame()\n")
        #expect(failure?.kind == "runner_handshake")
        #expect(failure?.description.contains("exceeds the") == true, "\(String(describing: failure))")
    }

    @Test func anUnknownFrameKindIsRefused() async throws {
        let failure = try await refusal("send(0x7E, 0, b'x')\nwhile True:\n    read_frame()\n")
        #expect(failure?.description.contains("unknown frame kind 0x7e") == true, "\(String(describing: failure))")
    }

    @Test func aFrameCutShortIsRefused() async throws {
        let failure = try await refusal("send(0x02, 0, b'{\"pro', length=500)\nsys.exit(0)\n")
        #expect(failure?.description.contains("ended inside") == true, "\(String(describing: failure))")
    }

    @Test func aForgedCookieIsRefused() async throws {
        let failure = try await refusal("send_ready({'cookie': 'forged'})\nwhile True:\n    read_frame()\n")
        #expect(failure == .runnerHandshake("the process that answered does not hold this launch's cookie"))
    }

    @Test func aDigestOtherThanTheHostsIsRefused() async throws {
        let failure = try await refusal("send_ready({'sha256': '0' * 64})\nwhile True:\n    read_frame()\n")
        #expect(failure?.description.contains("mapped a library with sha256 000") == true, "\(String(describing: failure))")
    }

    @Test func aRunnerThatExitsEarlyIsReportedWithItsMaskedStderr() async throws {
        let failure = try await refusal("sys.stderr.write('boom: the card was 4111 1111 1111 1111\\n')\nsys.stderr.flush()\nsys.exit(3)\n")
        let text = failure?.description ?? ""
        #expect(text.contains("exited with status 3"), "\(text)")
        #expect(text.contains("boom: the card was"), "\(text)")
        #expect(!text.contains("4111 1111 1111 1111") && !text.contains("4111111111111111"), "\(text)")
    }

    /// The pid and the network confinement come from /proc, not from READY.
    @Test func theHostDoesNotBelieveTheRunnersClaims() async throws {
        let record = try await load("send_ready()\nwhile True:\n    read_frame()\n")
        let adapter = try #require(record.adapter)
        let runner = try #require(adapter.runner)
        #expect(runner.pid != 1, "the pid READY claimed")
        #expect(adapter.networkConfinement?.confined == false, "a Python fake cannot unshare; it claimed it did")
        #expect(adapter.sandbox?.layers.allSatisfy { !$0.inForce } == true, "\(String(describing: adapter.sandbox))")
        await adapter.shutdown(grace: .seconds(2))
    }

    /// After the start: a completion for a call never issued is a counted
    /// violation; the call itself still resolves once; a second READY gets the
    /// runner killed (and, past max_crashes, the provider quarantined).
    @Test func aMisbehavingRunnerIsCountedThenKilled() async throws {
        let record = try await load("""
            send_ready()
            while True:
                kind, ident, body = read_frame()
                if kind == 0x10:
                    send(0x12, ident + 1000, struct.pack('<i', 0) + b'{"status":"succeeded"}')
                    send(0x12, ident, struct.pack('<i', 0) + b'{"status":"succeeded"}')
                    send_ready()

            """)
        let adapter = try #require(record.adapter)
        let result = try await adapter.call(.authorize, RunnerTests.authorize("success"))
        #expect(result.status == .succeeded)
        #expect(try await waitUntil { adapter.protocolViolations.count == 1 })
        #expect(try await waitUntil(within: .seconds(20)) { adapter.health.name == "quarantined" }, "\(adapter.health)")
        #expect(adapter.runner?.crashes == 1)
        await adapter.shutdown(grace: .seconds(2))
    }

    /// What a runner writes to stderr reaches the host's log as a warning,
    /// tagged with the adapter id and the runner's pid, card numbers masked.
    @Test func aRunnersStderrReachesTheLogTagged() async throws {
        let logs = EgressLogRecorder()
        let record = try await load("""
            send_ready()
            sys.stderr.write('hello from the runner, card 4111111111111111\\n')
            sys.stderr.flush()
            while True:
                read_frame()

            """, logger: logs.logger(level: .info))
        let adapter = try #require(record.adapter)
        let pid = try #require(adapter.runner?.pid)
        #expect(try await waitUntil { logs.lines.contains { $0.text.contains("hello from the runner") } })
        let line = try #require(logs.lines.first { $0.text.contains("hello from the runner") })
        #expect(line.level == .warning)
        #expect(line.text.contains("adapter=fake") && line.text.contains("runner_pid=\(pid)"), "\(line.text)")
        #expect(!line.text.contains("4111111111111111"), "\(line.text)")
        await adapter.shutdown(grace: .seconds(2))
    }

    /// An isolated adapter's `http_send` whose answer is too large for a
    /// frame (a 13 MiB body is over 16 MiB in base64): the request reached
    /// the provider, so the adapter is told GW_E_OUTCOME_UNKNOWN, never a
    /// status that proves nothing was sent (it was GW_E_INTERNAL; an adapter
    /// passing it on as its completion would have told the host "not charged").
    @Test func anHTTPAnswerTooLargeForAFrameLeavesTheOutcomeUnknown() async throws {
        let server = try LoopbackHTTPServer(body: String(repeating: "a", count: 13 << 20))
        let manifest: [String: Any] = [
            "file_format_version": "1.1.0", "id": "fake", "version": "1.0.0", "enabled": true, "mode": "test",
            "library": BuildProducts.directory.appendingPathComponent("libChaosAdapter.so").path,
            "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
            "operations": ["authorize"], "timeout_ms": 60000, "isolation": "process", "egress": ["127.0.0.1:\(server.port)"],
            "sandbox_exceptions": ["network", "filesystem", "pid", "ipc", "syscalls", "landlock"],
        ]
        try folder.write("fake.json", String(decoding: JSONSerialization.data(withJSONObject: manifest), as: UTF8.self))
        // On INVOKE: http_send to the server, then complete with the status the host answered it with.
        let record = try await load("""
            send_ready()
            while True:
                kind, ident, body = read_frame()
                if kind == 0x10:
                    request = json.dumps({"method": "GET", "url": "http://127.0.0.1:\(server.port)/big", "timeout_ms": 50000}).encode()
                    send(0x21, 77, request)
                    while True:
                        k, i, b = read_frame()
                        if k == 0x22 and i == 77:
                            send(0x12, ident, b)
                            break

            """)
        let adapter = try #require(record.adapter)
        let outcome = await adapter.invoke(.authorize, payload: Data(RunnerTests.authorize("success").jsonBytes()))
        guard case .completed(let status, let document) = outcome else { Issue.record("\(outcome)"); return }
        #expect(status == ABIStatus.outcomeUnknown.rawValue, "\(status): \(String(decoding: document, as: UTF8.self))")
        #expect(String(decoding: document, as: UTF8.self).contains("too large to pass to an isolated adapter"))
        #expect(server.requestLines == ["GET /big HTTP/1.1"], "the request reached the provider")
        await adapter.shutdown(grace: .seconds(2))
    }

    /// DESTROYED before the host asked is a violation too.
    @Test func anUnpromptedDestroyedIsAViolation() async throws {
        let record = try await load("send_ready()\nsend(0x31)\nwhile True:\n    read_frame()\n")
        let adapter = try #require(record.adapter)
        #expect(try await waitUntil(within: .seconds(20)) { adapter.health.name == "quarantined" }, "\(adapter.health)")
        await adapter.shutdown(grace: .seconds(2))
    }
}
