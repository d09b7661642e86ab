import CheckoutEngine
import CheckoutHTTP
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SQLiteCheckoutStore
import Synchronization
import Testing
import TestSupport

/// `gateway keys` and the first start of `gateway serve`, run as an operator
/// runs them: the executable, in a scratch data folder.
///
/// Heavy: each test starts `gateway` processes, `gateway serve` among them.
@Suite(.heavy) struct KeysCommandTests {
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func gateway(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcessOffThePool(BuildProducts.gateway.path, arguments)
    }

    @Test func keysCreateListAndRevokeThroughTheCLIAndNoSecretIsKept() async throws {
        let data = try Self.scratch().appendingPathComponent("data").path
        let created = try await Self.gateway(["keys", "create", "--mode", "live", "--name", "ci backend", "--data", data])
        #expect(created.status == 0, "\(created.output)")
        let secret = try #require(created.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("gk_live_") }, "\(created.stdout)")
        #expect(APIKeys.mode(ofSecret: secret) == .live)
        let id = try #require(created.stdout.firstMatch(of: /key_[0-9a-z]+/).map { String($0.output) }, "\(created.stdout)")

        let listed = try await Self.gateway(["keys", "list", "--json", "--data", data])
        #expect(listed.status == 0, "\(listed.output)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["id"] as? String == id && row["name"] as? String == "ci backend" && row["mode"] as? String == "live")
        #expect(row["prefix"] as? String == String(secret.prefix(12)) + "…")
        #expect((row["createdAt"] as? Double).map { $0 > 1_700_000_000 } == true && row["revokedAt"] == nil, "dates are Unix seconds")
        let table = try await Self.gateway(["keys", "list", "--data", data])
        #expect(table.stdout.contains(id) && table.stdout.contains("ci backend") && table.stdout.contains("live"), "\(table.stdout)")
        for output in [listed.output, table.output] {
            #expect(!output.contains(secret.dropFirst(12)), "list shows a secret")
        }

        let revoked = try await Self.gateway(["keys", "revoke", id, "--data", data])
        #expect(revoked.status == 0 && revoked.stdout.contains("revoked live key \(id)"), "\(revoked.output)")
        let after = try await Self.gateway(["keys", "list", "--json", "--data", data])
        let revokedRow = try #require((try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])?.first)
        #expect((revokedRow["revokedAt"] as? Double).map { $0 > 1_700_000_000 } == true)

        // What a running server reads: the key is known by its hash, and revoked
        // (the database opened and read off the concurrency pool: both block).
        let hash = try #require(APIKeys.record(forSecret: secret)).hash
        let database = URL(fileURLWithPath: data).appendingPathComponent("checkout.sqlite").path
        let stored = try #require(try await offThePool { () throws -> APIKeyRecord? in
            try SQLiteCheckoutStore(path: database).apiKey(hash: hash)
        })
        #expect(stored.id == id && stored.isRevoked)
        // The secret is nowhere in the database. (The store just released may
        // still be closing its last connection on a thread of its own, and SQLite
        // then removes the -wal and -shm files: one that is gone holds nothing.)
        for file in try FileManager.default.contentsOfDirectory(atPath: data) where file.hasPrefix("checkout.sqlite") {
            guard let bytes = FileManager.default.contents(atPath: URL(fileURLWithPath: data).appendingPathComponent(file).path) else { continue }
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is in \(file)")
        }

        let unknown = try await Self.gateway(["keys", "revoke", "key_nope", "--data", data])
        #expect(unknown.status != 0 && unknown.output.contains("no API key with id key_nope"), "\(unknown.output)")
        let badMode = try await Self.gateway(["keys", "create", "--mode", "production", "--data", data])
        #expect(badMode.status != 0)
    }

    /// The first start makes a test key in `<data>/test-api-key` (0600) that
    /// the API takes; a second start keeps it; neither prints or logs it.
    @Test func serveWritesTheFirstTestKeyOnceToAFileOnlyItsOwnerReads() async throws {
        let folder = try Self.scratch()
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests, to: manifests)
        try? FileManager.default.removeItem(at: manifests.appendingPathComponent("schema"))
        let data = folder.appendingPathComponent("data")
        let file = data.appendingPathComponent("test-api-key")
        let arguments = ["serve", "--port", "0", "--manifests", manifests.path, "--data", data.path, "--log-level", "trace"]

        let first = try await ServeProcess(arguments)
        let port = try await first.port()
        let secret = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(APIKeys.mode(ofSecret: secret) == .test)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue & 0o777 == 0o600, "mode \(String(mode.intValue, radix: 8))")
        #expect(first.stdout.contains(file.path), "says where the key is: \(first.stdout)")
        #expect(try await Self.post(port: port, key: nil) == 401)
        #expect(try await Self.post(port: port, key: secret) == 201)
        #expect(await first.stop() == .exited(0))
        #expect(!(first.stdout + first.stderr).contains(secret.dropFirst(8)), "the key was printed or logged")

        let second = try await ServeProcess(arguments)
        let again = try await second.port()
        #expect(try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == secret, "the key file was replaced")
        #expect(second.stdout.contains(file.path))
        #expect(try await Self.post(port: again, key: secret) == 201)
        #expect(await second.stop() == .exited(0))
        #expect(!(second.stdout + second.stderr).contains(secret.dropFirst(8)), "the key was printed or logged")
        let keys = try await Self.gateway(["keys", "list", "--json", "--data", data.path])
        #expect((try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [Any])?.count == 1, "\(keys.output)")
    }

    static func post(port: Int, key: String?) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/sessions")!)
        request.httpMethod = "POST"
        request.httpBody = Data(newSession.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        // A backstop (scaled), not URLSession's 60 s: a busy machine is slow, not wrong.
        request.timeoutInterval = TestTime.seconds(120)
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}

/// `gateway serve` as a child process, its output going to files that the
/// test reads while it runs.
///
/// A server outlives a test, unlike the short commands ``runProcess`` runs,
/// so it is started so that it can never be left behind: it inherits no
/// descriptor but its output (not the test runner's, such as a build lock
/// it holds), and it is killed if the test process dies (`setpriv
/// --pdeathsig`, tied to the thread that started it, which lives until the
/// server exits and reaps it). One a test drops without stopping it (the
/// test failed half-way) is killed then.
///
/// Nothing here blocks a Swift concurrency thread (two of them on a 2-core
/// machine run every test): the server is started and waited for on that
/// thread of its own, and a test awaits the start and the exit without
/// holding a thread.
final class ServeProcess: Sendable {
    private let out: String
    private let err: String
    private let pid: pid_t
    private let exit = Exit()
    private let stopped = Mutex(false)

    /// How long a server may take to say it is serving (scaled by
    /// `GATEWAY_TEST_TIME_SCALE`): a backstop, never a timing.
    static let startBackstop: Duration = .seconds(120)
    /// How long a server may take to exit after SIGTERM (scaled) before it is
    /// killed: its own graceful shutdown is bounded (a minute, then ten
    /// seconds of cancellation), so this only ends one that hangs.
    static let stopBackstop: Duration = .seconds(120)

    /// The server's end, set once by the thread that waits for it; awaited
    /// by the tests without a thread.
    private final class Exit: Sendable {
        private struct State {
            var termination: ChildProcess.Termination?
            var waiting: [CheckedContinuation<ChildProcess.Termination, Never>] = []
        }

        private let state = Mutex(State())

        var termination: ChildProcess.Termination? { state.withLock { $0.termination } }

        /// The waiting thread: the server ended so.
        func ended(_ termination: ChildProcess.Termination) {
            let waiting = state.withLock { state -> [CheckedContinuation<ChildProcess.Termination, Never>] in
                state.termination = termination
                let waiting = state.waiting
                state.waiting = []
                return waiting
            }
            for continuation in waiting { continuation.resume(returning: termination) }
        }

        /// The server's end, once it comes.
        func value() async -> ChildProcess.Termination {
            await withCheckedContinuation { (continuation: CheckedContinuation<ChildProcess.Termination, Never>) in
                let now = state.withLock { state -> ChildProcess.Termination? in
                    if let termination = state.termination { return termination }
                    state.waiting.append(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }

    /// Starts the server; returns once it is started (``port()`` waits for it to serve).
    ///
    /// - Parameter environment: set for the server beside the test's own.
    init(_ arguments: [String], environment: [String: String] = [:]) async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)").path
        let out = base + ".out", err = base + ".err"
        self.out = out
        self.err = err
        let outFD = open(out, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        let errFD = open(err, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        defer { close(outFD); close(errFD) }
        let gateway = [BuildProducts.gateway.path] + arguments
        let command = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            ? ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"] + gateway : gateway
        let exit = self.exit
        do {
            // The thread that spawns the server is the one whose end
            // `--pdeathsig` watches: it stays, waiting for the server's exit.
            pid = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<pid_t, any Error>) in
                Thread {
                    let pid: pid_t
                    do {
                        pid = try ServeProcess.spawn(command, environment: environment, standardOutput: outFD, standardError: errFD)
                    } catch {
                        continuation.resume(throwing: error)
                        return
                    }
                    continuation.resume(returning: pid)
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                    let signal = status & 0x7f
                    exit.ended(signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal))
                }.start()
            }
        } catch {
            unlink(out)
            unlink(err)
            throw error
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later;
    /// Swift's Glibc module does not declare it), found at run time.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            .map { unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self) }
    }()

    private static func spawn(_ command: [String], environment: [String: String], standardOutput: Int32, standardError: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        _ = addCloseFrom?(&actions, 3)
        let argv = command.map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
        return pid
    }

    var stdout: String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }

    /// The test API key a server made in `data` on its first start (`<data>/test-api-key`), once it is written.
    static func testAPIKey(in data: URL) async throws -> String {
        let file = data.appendingPathComponent("test-api-key")
        #expect(try await waitUntil(within: .seconds(120)) { FileManager.default.fileExists(atPath: file.path) })
        return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The API's port, once the server says it is serving (within
    /// ``startBackstop``, scaled), or an error once it has exited.
    func port() async throws -> Int {
        let deadline = ContinuousClock.now + Self.startBackstop.scaled
        while ContinuousClock.now < deadline, exit.termination == nil {
            if let match = stdout.firstMatch(of: /serving the checkout API on http:\/\/[0-9.]+:([0-9]+)/), let port = Int(match.output.1) {
                return port
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "gateway serve did not start: \(stdout) \(stderr)"])
    }

    /// SIGTERM, then the exit; SIGKILL past ``stopBackstop`` (scaled), so a
    /// server that hangs in its shutdown fails the test (it ends signalled)
    /// instead of hanging it.
    func stop() async -> ChildProcess.Termination {
        stopped.withLock { $0 = true }
        Glibc.kill(pid, SIGTERM)
        let pid = self.pid, exit = self.exit, limit = Self.stopBackstop.scaled
        let backstop = Task {
            guard (try? await Task.sleep(for: limit)) != nil, exit.termination == nil else { return }
            print("gateway serve (pid \(pid)) still running \(limit) after SIGTERM: killing it")
            Glibc.kill(pid, SIGKILL)
        }
        let termination = await exit.value()
        backstop.cancel()
        if termination != .exited(0) {
            // What it logged as it stopped (ShutdownStep), for the failure.
            print("gateway serve (pid \(pid)) ended \(termination) after SIGTERM; the end of its log:\n"
                  + stderr.split(separator: "\n").suffix(40).joined(separator: "\n"))
        }
        return termination
    }

    /// SIGKILL (a host that dies mid-call, with no chance to record
    /// anything), then the exit.
    func kill() async -> ChildProcess.Termination {
        stopped.withLock { $0 = true }
        Glibc.kill(pid, SIGKILL)
        return await exit.value()
    }

    /// A test that failed before stopping it leaves no server behind: SIGKILL,
    /// and the thread that waits for the server reaps it (nothing waits here,
    /// on whatever thread drops the last reference).
    deinit {
        if !stopped.withLock({ $0 }), exit.termination == nil {
            Glibc.kill(pid, SIGKILL)
        }
        unlink(out)
        unlink(err)
    }
}
