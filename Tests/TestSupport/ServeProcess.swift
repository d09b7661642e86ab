import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

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
public final class ServeProcess: Sendable {
    private let out: String
    private let err: String
    /// The server's process id.
    public let pid: pid_t
    private let exit = Exit()
    private let stopped = Mutex(false)

    /// How long a server may take to say it is serving (scaled by
    /// `GATEWAY_TEST_TIME_SCALE`): a backstop, never a timing.
    public static let startBackstop: Duration = .seconds(120)
    /// How long a server may take to exit after SIGTERM (scaled) before it is
    /// killed: its own graceful shutdown is bounded (a minute, then ten
    /// seconds of cancellation), so this only ends one that hangs.
    public static let stopBackstop: Duration = .seconds(120)

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
    public init(_ arguments: [String], environment: [String: String] = [:]) async throws {
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
                    let child: ChildProcess
                    do {
                        child = try ChildProcess(command[0], Array(command.dropFirst()), environment: environment,
                                                 standardOutput: outFD, standardError: errFD)
                    } catch {
                        continuation.resume(throwing: error)
                        return
                    }
                    continuation.resume(returning: child.pid)
                    exit.ended(child.waitForExit())
                }.start()
            }
        } catch {
            unlink(out)
            unlink(err)
            throw error
        }
    }

    public var stdout: String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }

    /// The test API key this server made in `data` on its first start
    /// (`<data>/test-api-key`), once the server says it is recorded.
    ///
    /// The file is written before the key reaches the store (FirstTestKey),
    /// so the file alone is not the signal: a request sent between the two
    /// gets a 401. The server's stdout line "made a test API key" (or, on a
    /// later start, "the test API key of the first start") comes after both.
    public func testAPIKey(in data: URL) async throws -> String {
        let said = try await waitUntil(within: .seconds(120)) { [self] in
            stdout.contains("made a test API key") || stdout.contains("the test API key of the first start") || exit.termination != nil
        }
        #expect(said && exit.termination == nil, "no test API key: \(stdout) \(stderr.suffix(2000))")
        let file = data.appendingPathComponent("test-api-key")
        return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The API's port, once the server says it is serving (within
    /// ``startBackstop``, scaled), or an error once it has exited.
    public func port() async throws -> Int {
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
    public func stop() async -> ChildProcess.Termination {
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
    public func kill() async -> ChildProcess.Termination {
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
