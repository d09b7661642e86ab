import PaymentFields
import Foundation
import GatewayPayloads
import Logging
import Synchronization

/// One `gateway-runner` process seen from the host: its socket, the thread
/// that reads its frames and serves its host-service requests, the thread
/// that logs its stderr, and its end.
///
/// Host services stay in the host: a runner's log lines, secrets and HTTP
/// requests are served here by the instance's ``HostContext``, so the egress
/// allowlist, TLS, timeouts and redaction are the ones every adapter gets.
final class RunnerProcess: @unchecked Sendable {
    enum Handshake {
        case ready(RunnerReady)
        case failed(LoadFailure)
        case ended(String)
        /// READY of another runner protocol version (read before the rest of
        /// the document, which this host may not be able to read).
        case otherProtocol(Int)
    }

    /// How long a runner may take from start to READY.
    static let startTimeout: Duration = .seconds(15)

    let pid: pid_t
    let channel: FrameChannel
    let cookie: String
    private let stderrFD: Int32
    private let context: HostContext
    private let logger: Logger

    /// Where the answers to the runner's requests (secrets, HTTP results) are
    /// sent from: never the frame reader (which must go on reading) nor a
    /// Swift concurrency thread.
    private let replies = DispatchQueue(label: "runner-replies")
    private let handshake = Mutex<Handshake?>(nil)
    private let handshakeDone = DispatchSemaphore(value: 0)
    private let exited = Atomic<Bool>(false)
    private let destroyedAck = Atomic<Bool>(false)
    private let destroySent = Atomic<Bool>(false)
    /// Whether the waiter reaped the process (then its pid is not ours to signal).
    private let reaping = Mutex(false)
    private let reaped = DispatchSemaphore(value: 0)
    private let waitStatus = Mutex<Int32>(0)
    private let killReason = Mutex<String?>(nil)
    private let tail = Mutex<[String]>([])
    /// Told once the process has ended and been reaped, with why.
    private let onEnd = CallbackSlot<(RunnerProcess, String)>()
    /// The call id of the last COMPLETE or REFUSED the reader handed to the
    /// call table (so its caller is resumed): what a caller spinning for its
    /// answer watches (``RunnerConnection``).
    private let lastAnswer = Atomic<UInt64>(0)

    /// Its cgroup leaf, where the host could make one.
    private let cgroup: RunnerCgroup?

    private init(spawned: SpawnedRunner, cookie: String, context: HostContext, cgroup: RunnerCgroup?) {
        pid = spawned.pid
        self.cgroup = cgroup
        channel = FrameChannel(fd: spawned.channelFD, nonBlocking: true)
        stderrFD = spawned.stderrFD
        self.cookie = cookie
        self.context = context
        var logger = context.logger
        logger[metadataKey: "runner_pid"] = "\(spawned.pid)"
        self.logger = logger
    }

    /// Whether the process has ended (and been reaped).
    var hasExited: Bool { exited.load(ordering: .acquiring) }
    /// Whether the reader has handed the answer to `callID` (its completion
    /// or refusal) to the call table, and no other answer since.
    func answered(_ callID: UInt64) -> Bool { lastAnswer.load(ordering: .acquiring) == callID }
    /// Whether it acknowledged DESTROY (the adapter's `destroy` returned).
    var destroyed: Bool { destroyedAck.load(ordering: .acquiring) }
    /// Whether DESTROY was sent.
    var destroyRequested: Bool { destroySent.load(ordering: .acquiring) }
    /// Its last lines of stderr (for the crash log).
    var stderrTail: [String] { tail.withLock { $0 } }

    /// What to start a runner with, besides LOAD.
    struct Setup: Sendable {
        var library: SealedLibrary
        var network: Manifest.NetworkIsolation
        var exceptions: [SandboxLayer]
        var simulatedRefusals: String?
    }

    /// The process that runs the adapter (inside the runner's PID namespace,
    /// seen from here): where its CPU is counted. Set before `start` returns.
    private(set) var adapterPID: pid_t = 0
    /// The sandbox layers in force, as /proc shows them. Set before `start` returns.
    private(set) var sandbox = SandboxReport(layers: [])

    /// How big a runner's private /tmp is, in MiB.
    static let tmpMegabytes = 32

    /// Starts a runner for `load` and waits for it to be ready; refuses one
    /// whose sandbox misses a layer the manifest did not except.
    static func start(executable: String, load: RunnerLoad, setup: Setup,
                      context: HostContext) throws(LoadFailure) -> (RunnerProcess, RunnerReady) {
        var cookieBytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in cookieBytes.indices { cookieBytes[i] = generator.next() }
        let cookie = cookieBytes.map { String(format: "%02x", $0) }.joined()
        guard setup.library.isSealed else { throw .libraryUnreadable(path: load.library, detail: "the in-memory copy lost its seals") }
        let leaf = RunnerCgroups.shared.leaf(for: context.adapterID, limits: load.limits)
        let cgroup = try? leaf.get()
        var variables = environment(cookie: cookie, setup: setup)
        if cgroup != nil { variables[RunnerProtocol.cgroupVariable] = "\(RunnerProtocol.cgroupFD)" }
        let spawning = RunnerSpawner.shared.spawn(executable: executable, environment: variables, library: setup.library.fd, cgroup: cgroup?.procsFD)
        cgroup?.handedOver()
        let spawned: SpawnedRunner
        do { spawned = try spawning.get() } catch {
            cgroup?.release()
            throw error
        }
        let process = RunnerProcess(spawned: spawned, cookie: cookie, context: context, cgroup: cgroup)
        process.startThreads()
        do {
            try process.channel.send(.load, json: load)
        } catch {
            process.kill(because: "the LOAD frame could not be sent: \(error)")
        }
        let waited = process.handshakeDone.wait(timeout: .now() + .milliseconds(Int(startTimeout.nanoseconds / 1_000_000)))
        if waited == .timedOut {
            process.kill(because: "not ready after \(startTimeout)")
            throw .runnerHandshake("the runner was not ready within \(startTimeout)\(process.tailSummary)")
        }
        switch process.handshake.withLock({ $0! }) {
        case .otherProtocol(let spoken):
            process.kill(because: "wrong protocol")
            throw .runnerHandshake("the runner speaks runner protocol \(spoken), this host \(RunnerProtocol.version): rebuild gateway-runner with this gateway")
        case .ready(let ready):
            guard ready.protocol == RunnerProtocol.version else {
                process.kill(because: "wrong protocol")
                throw .runnerHandshake("the runner speaks runner protocol \(ready.protocol), this host \(RunnerProtocol.version): rebuild gateway-runner with this gateway")
            }
            guard ready.cookie == cookie else {
                process.kill(because: "wrong cookie")
                throw .runnerHandshake("the process that answered does not hold this launch's cookie")
            }
            guard ready.sha256 == load.sha256 else {
                process.kill(because: "wrong digest")
                throw .runnerHandshake("the runner mapped a library with sha256 \(ready.sha256), the host checked \(load.sha256)")
            }
            let adapter = SandboxInspection.adapterProcess(spawned: process.pid)
            var report = SandboxInspection.inspect(adapter: adapter, claims: ready.sandbox,
                                                   exceptions: setup.exceptions, network: setup.network)
            switch leaf {
            case .success(let cgroup): report.resources = cgroup.report(adapter: adapter)
            case .failure(let unavailable): report.resources = .init(cgroup: nil, limits: [], reason: "\(unavailable.reason); rlimits and the syscall filter instead")
            }
            let missing = SandboxInspection.missing(report, exceptions: setup.exceptions, network: setup.network)
            guard missing.isEmpty else {
                process.kill(because: "its sandbox is incomplete")
                throw .sandboxIncomplete(layers: missing.map(\.layer.rawValue),
                                         detail: missing.map { "\($0.layer.rawValue): \($0.reason ?? "not in force")" }.joined(separator: "; "))
            }
            process.adapterPID = adapter
            process.sandbox = report
            var checked = ready
            checked.pid = process.pid
            return (process, checked)
        case .failed(let failure):
            process.kill(because: "load failed")
            throw failure
        case .ended(let reason):
            throw .runnerHandshake("the runner \(reason) before it was ready\(process.tailSummary)")
        }
    }

    /// The runner's whole environment: nothing of the host's but what a
    /// process needs to run, so no other adapter's `env:` secret reaches it.
    static func environment(cookie: String, setup: Setup) -> [String: String] {
        let inherited = ProcessInfo.processInfo.environment
        var environment = inherited.filter { key, _ in
            ["PATH", "LANG", "TZ", "LD_LIBRARY_PATH"].contains(key) || key.hasPrefix("LC_")
        }
        // A folder of the host's (the mock's books): of use only where the
        // manifest lets the runner see the host's files.
        if setup.exceptions.contains(.filesystem), let state = inherited["GATEWAY_SANDBOX_STATE"] { environment["GATEWAY_SANDBOX_STATE"] = state }
        environment[RunnerProtocol.cookieVariable] = cookie
        environment[RunnerProtocol.hostPIDVariable] = "\(getpid())"
        environment[RunnerProtocol.networkVariable] = setup.network.rawValue
        environment[RunnerProtocol.exceptionsVariable] = setup.exceptions.map(\.rawValue).joined(separator: ",")
        environment[RunnerProtocol.tmpVariable] = "\(tmpMegabytes)"
        if let simulated = setup.simulatedRefusals, !simulated.isEmpty { environment[RunnerProtocol.simulateVariable] = simulated }
        // An adapter's crash is the host's to report: no Swift backtracer in the runner.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // libdispatch's own diagnostics off: it would log, to syslog through a
        // socket the sandbox denies, that a runner without capabilities cannot
        // raise its worker threads' priority (expected, and harmless).
        environment["LIBDISPATCH_LOG"] = "NO"
        return environment
    }

    private var tailSummary: String {
        let lines = stderrTail
        return lines.isEmpty ? "" : "; its stderr ended with: " + lines.suffix(5).joined(separator: " | ")
    }

    /// Who hears of the end (the connection, once the runner is adopted).
    func whenEnded(_ action: @escaping @Sendable (RunnerProcess, String) -> Void) {
        onEnd.set { action($0.0, $0.1) }
    }

    /// Whether this runner ended by itself (a crash, an exit, a closed
    /// socket) rather than by a kill the host meant (a hung call, a budget,
    /// closing) or after destroy. Read from its wait status: a kill the host
    /// sends on a broken stream finds a runner already dead of its own cause.
    var endedOnItsOwn: Bool { ownEnd.load(ordering: .acquiring) }
    private let ownEnd = Atomic<Bool>(false)

    /// Kills the runner and everything it started (its process group, SIGKILL);
    /// the waiter then reaps it and the reader reports the end.
    func kill(because reason: String) {
        killReason.withLock { if $0 == nil { $0 = reason } }
        signalGroup()
    }

    /// SIGKILL to the runner's process group, unless it is reaped (then its
    /// pid may belong to someone else).
    private func signalGroup() {
        reaping.withLock { reaped in
            if !reaped { _ = Glibc.kill(-pid, SIGKILL) }
        }
    }

    /// Asks the adapter to destroy itself (then the runner exits); from now on
    /// a DESTROYED frame is expected.
    func sendDestroy() {
        destroySent.store(true, ordering: .releasing)
        do { try channel.send(.destroy, id: 0) } catch { kill(because: "DESTROY could not be sent: \(error)") }
    }

    // MARK: Threads

    private func startThreads() {
        let label = "runner-\(context.adapterID.prefix(20))"
        let waiter = Thread { [self] in waitForExit() }
        waiter.name = "\(label)-wait"
        waiter.start()
        let reader = Thread { [self] in readFrames() }
        reader.name = "\(label)-frames"
        reader.start()
        let errors = Thread { [self] in readStderr() }
        errors.name = "\(label)-stderr"
        errors.start()
    }

    /// Watches the process itself, not its socket (a child it forked may hold
    /// the socket open): once it has exited, still a zombie so its pid and
    /// group id cannot be reused, kill what is left of its group, then reap it.
    private func waitForExit() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        _ = Glibc.kill(-pid, SIGKILL)
        cgroup?.killAll()
        var status: Int32 = 0
        reaping.withLock { reaped in
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
        waitStatus.withLock { $0 = status }
        // Wakes the reader (and any send waiting on the runner) if a survivor
        // still held the socket; then no frame can go out.
        shutdown(channel.fd, Int32(SHUT_RDWR))
        channel.kill()
        reaped.signal()
        // After the wake: removing the leaf may wait a moment for the kernel.
        cgroup?.release()
    }

    private func readFrames() {
        var ending = "closed its socket"
        while true {
            do {
                guard let frame = try channel.next() else { break }
                if let violation = handle(frame) {
                    ending = "broke the frame protocol (\(violation))"
                    logger.error("runner of \(context.adapterID) broke the frame protocol: \(violation); killing it")
                    kill(because: "it broke the frame protocol")
                    break
                }
            } catch {
                ending = "broke its stream (\(error))"
                kill(because: "its stream broke")
                break
            }
        }
        // A runner that closed its socket is of no use, exited or not; one
        // that acknowledged destroy exits by itself (within 2 s, or is killed).
        channel.kill()
        if !destroyed {
            // Its end of file usually means it died; if not, it goes now
            // (no reason recorded: the wait status tells which it was).
            signalGroup()
        } else if reaped.wait(timeout: .now() + .seconds(2)) == .timedOut {
            kill(because: "it did not exit after destroy")
        } else {
            reaped.signal()
        }
        reaped.wait()
        reaped.signal()
        let status = waitStatus.withLock { $0 }
        let killedFor = killReason.withLock { $0 }
        if !destroyed && !(killedFor != nil && status & 0x7f == SIGKILL) { ownEnd.store(true, ordering: .releasing) }
        let how = killedFor.map { "was killed by the host (\($0))" } ?? describeExit(status)
        let reason = destroyed ? "exited after destroy" : "\(how) (its socket: \(ending))"
        exited.store(true, ordering: .releasing)
        let first = handshake.withLock { state -> Bool in
            guard state == nil else { return false }
            state = .ended(reason)
            return true
        }
        if first { handshakeDone.signal() }
        onEnd((self, reason))
    }

    /// Serves one frame; returns a protocol violation, or nil.
    private func handle(_ frame: Frame) -> String? {
        switch frame.kind {
        case .complete where frame.body.count < 4 && frame.flags & FrameFlag.tooLarge == 0,
             .refused where frame.body.count < 4, .log where frame.body.count < 4:
            return "a \(frame.kind) frame of \(frame.body.count) bytes, too short for its status"
        case .secretGet where frame.body.count < 8 || frame.body.count > 8 + 256:
            return "a SECRET_GET frame of \(frame.body.count) bytes (a capacity and a name of at most 256 bytes)"
        case .destroyed where !destroySent.load(ordering: .acquiring):
            return "DESTROYED before the host asked for destroy"
        case .complete:
            if frame.flags & FrameFlag.tooLarge != 0 {
                context.calls.complete(callID: frame.id, status: ABIStatus.outcomeUnknown.rawValue, payload: HostContext.tooLarge(nil))
            } else {
                context.complete(callID: frame.id, status: frame.int32(at: 0), result: frame.rest(from: 4))
            }
            lastAnswer.store(frame.id, ordering: .releasing)
        case .refused:
            context.calls.refused(frame.id, status: frame.int32(at: 0))
            lastAnswer.store(frame.id, ordering: .releasing)
        case .log:
            let message = frame.rest(from: 4)
            context.log(level: frame.int32(at: 0), message: message)
        case .secretGet:
            serveSecret(frame)
        case .httpSend:
            let context = self.context
            // The request left for the provider: an answer the adapter cannot
            // be given leaves the call's outcome unknown (never a status that
            // proves nothing was sent).
            answer(frame, service: "http_send", tooLarge: .outcomeUnknown) { await context.performEgress($0) }
        case .walletDecrypt:
            let wallets = context.wallets
            // Nothing left the host: the token is opened here.
            answer(frame, service: "wallet_decrypt", tooLarge: .internal) { await wallets.decrypt($0) }
        case .ready, .loadFailed:
            let outcome: Handshake
            if frame.kind == .ready, let spoken = RunnerProtocol.version(of: frame.body), spoken != RunnerProtocol.version {
                outcome = .otherProtocol(spoken)
            } else {
                do {
                    outcome = frame.kind == .ready
                        ? .ready(try frame.json(RunnerReady.self))
                        : .failed(try frame.json(RunnerLoadFailure.self).failure)
                } catch {
                    return "a \(frame.kind) frame that is not a valid document: \(error)"
                }
            }
            let first = handshake.withLock { state -> Bool in
                guard state == nil else { return false }
                state = outcome
                return true
            }
            guard first else { return "a second \(frame.kind) frame" }
            handshakeDone.signal()
        case .destroyed:
            destroyedAck.store(true, ordering: .releasing)
        case .load, .invoke, .cancel, .httpResult, .secretValue, .destroy:
            return "the host's own \(frame.kind) frame"
        }
        return nil
    }

    /// Serves one callback-style request of the runner's adapter (`http_send`,
    /// `wallet_decrypt`): `perform` runs off the reader, and its status and
    /// document go back in an HTTP_RESULT frame, in order with the replies.
    /// An answer too large for a frame is replaced by `tooLarge` and a
    /// message saying so.
    private func answer(_ frame: Frame, service: String, tooLarge: ABIStatus, perform: @escaping @Sendable (Data) async -> (Int32, Data)) {
        let request = Data(frame.rest(from: 0))
        let id = frame.id
        let channel = self.channel
        let replies = self.replies
        // Done once its frame is written: the runner reads it before any
        // DESTROY, and runs its callback before it destroys.
        context.serve(service) { [weak self] in
            let (status, document) = await perform(request)
            await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in
                replies.async { [weak self] in
                    defer { written.resume() }
                    let failure: FrameError? = document.withUnsafeBytes { bytes in
                        do throws(FrameError) { try channel.send(.httpResult, id: id, prefix: .int32(status), body: bytes) } catch { return error }
                        return nil
                    }
                    switch failure {
                    case nil:
                        break
                    case .tooLarge(let size)?:
                        let refusal = Data(ErrorDocument(message: "the answer of \(size) bytes is too large to pass to an isolated adapter").jsonBytes())
                        refusal.withUnsafeBytes { try? channel.send(.httpResult, id: id, prefix: .int32(tooLarge.rawValue), body: $0) }
                    case let other?:
                        self?.kill(because: "it did not read the answer to its \(service) (\(other))")
                    }
                }
            }
        }
    }

    private func serveSecret(_ frame: Frame) {
        let capacity = Int(min(frame.uint64(at: 0), 1 << 20))
        let name = String(decoding: frame.rest(from: 8), as: UTF8.self)
        let id = frame.id
        replies.async { [self] in answerSecret(id: id, name: name, capacity: capacity) }
    }

    private func answerSecret(id: UInt64, name: String, capacity: Int) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(capacity, 1), alignment: 8)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        var length = 0
        let status = context.secret(named: name, into: buffer.baseAddress, capacity: capacity, length: &length)
        var prefix = FramePrefix.int32(status)
        prefix.append(UInt64(length))
        let value = status == 0 ? UnsafeRawBufferPointer(rebasing: buffer[..<length]) : UnsafeRawBufferPointer(start: nil, count: 0)
        do { try channel.send(.secretValue, id: id, prefix: prefix, body: value) }
        catch { kill(because: "it did not read the answer to its secret_get (\(error))") }
    }

    private func readStderr() {
        var pending = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(stderrFD, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending.append(contentsOf: chunk[..<n])
            while let newline = pending.firstIndex(of: 10) {
                emit(pending[pending.startIndex..<newline])
                pending.removeSubrange(pending.startIndex...newline)
            }
            if pending.count > 8192 {
                emit(pending)
                pending.removeAll()
            }
        }
        if !pending.isEmpty { emit(pending) }
        close(stderrFD)
    }

    private func emit(_ bytes: Data) {
        let line = Redaction.maskingCardNumbers(in: String(decoding: bytes, as: UTF8.self))
        tail.withLock {
            $0.append(line)
            if $0.count > 20 { $0.removeFirst($0.count - 20) }
        }
        logger.warning("runner stderr: \(line)")
    }
}
