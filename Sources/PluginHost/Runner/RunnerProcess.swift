import Foundation
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
    }

    /// How long a runner may take from start to READY.
    static let startTimeout: Duration = .seconds(15)

    let pid: pid_t
    let channel: FrameChannel
    let cookie: String
    private let stderrFD: Int32
    private let context: HostContext
    private let logger: Logger

    private let handshake = Mutex<Handshake?>(nil)
    private let handshakeDone = DispatchSemaphore(value: 0)
    private let exited = Atomic<Bool>(false)
    private let destroyedAck = Atomic<Bool>(false)
    private let killReason = Mutex<String?>(nil)
    private let tail = Mutex<[String]>([])
    private let exitDescription = Mutex<String?>(nil)
    /// Told once the process has ended and been reaped, with why.
    private let onEnd = Mutex<(@Sendable (RunnerProcess, String) -> Void)?>(nil)

    private init(spawned: SpawnedRunner, cookie: String, context: HostContext) {
        pid = spawned.pid
        channel = FrameChannel(fd: spawned.channelFD)
        stderrFD = spawned.stderrFD
        self.cookie = cookie
        self.context = context
        var logger = context.logger
        logger[metadataKey: "runner_pid"] = "\(spawned.pid)"
        self.logger = logger
    }

    deinit {
        close(channel.fd)
    }

    /// Whether the process has ended (and been reaped).
    var hasExited: Bool { exited.load(ordering: .acquiring) }
    /// Whether it acknowledged DESTROY (the adapter's `destroy` returned).
    var destroyed: Bool { destroyedAck.load(ordering: .acquiring) }
    /// Its last lines of stderr (for the crash log).
    var stderrTail: [String] { tail.withLock { $0 } }

    /// Starts a runner for `load` and waits for it to be ready.
    static func start(executable: String, load: RunnerLoad, network: Manifest.NetworkIsolation,
                      context: HostContext) throws(LoadFailure) -> (RunnerProcess, RunnerReady) {
        var cookieBytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in cookieBytes.indices { cookieBytes[i] = generator.next() }
        let cookie = cookieBytes.map { String(format: "%02x", $0) }.joined()
        let spawned = try RunnerSpawner.shared.spawn(executable: executable, environment: environment(cookie: cookie, network: network)).get()
        let process = RunnerProcess(spawned: spawned, cookie: cookie, context: context)
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
            return (process, ready)
        case .failed(let failure):
            process.kill(because: "load failed")
            throw failure
        case .ended(let reason):
            throw .runnerHandshake("the runner \(reason) before it was ready\(process.tailSummary)")
        }
    }

    /// The runner's whole environment: nothing of the host's but what a
    /// process needs to run, so no other adapter's `env:` secret reaches it.
    static func environment(cookie: String, network: Manifest.NetworkIsolation) -> [String: String] {
        let inherited = ProcessInfo.processInfo.environment
        var environment = inherited.filter { key, _ in
            ["PATH", "LANG", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "GATEWAY_SANDBOX_STATE"].contains(key) || key.hasPrefix("LC_")
        }
        environment[RunnerProtocol.cookieVariable] = cookie
        environment[RunnerProtocol.hostPIDVariable] = "\(getpid())"
        environment[RunnerProtocol.networkVariable] = network.rawValue
        return environment
    }

    private var tailSummary: String {
        let lines = stderrTail
        return lines.isEmpty ? "" : "; its stderr ended with: " + lines.suffix(5).joined(separator: " | ")
    }

    /// Who hears of the end (the connection, once the runner is adopted).
    func whenEnded(_ action: @escaping @Sendable (RunnerProcess, String) -> Void) {
        onEnd.withLock { $0 = action }
    }

    /// Kills the process (SIGKILL); its reader then reaps it and reports the end.
    func kill(because reason: String) {
        guard !hasExited else { return }
        killReason.withLock { if $0 == nil { $0 = reason } }
        // The pid cannot have been reused: only the reader reaps it, after this flag.
        _ = Glibc.kill(pid, SIGKILL)
    }

    // MARK: Threads

    private func startThreads() {
        let reader = Thread { [self] in readFrames() }
        reader.name = "runner-\(context.adapterID.prefix(20))-frames"
        reader.start()
        let errors = Thread { [self] in readStderr() }
        errors.name = "runner-\(context.adapterID.prefix(20))-stderr"
        errors.start()
    }

    private func readFrames() {
        var ending = "closed its socket"
        while true {
            do {
                guard let frame = try channel.next() else { break }
                if let violation = handle(frame) {
                    ending = "broke the frame protocol (\(violation))"
                    logger.error("runner of \(context.adapterID) broke the frame protocol: \(violation); killing it")
                    _ = Glibc.kill(pid, SIGKILL)
                    break
                }
            } catch {
                ending = "broke its stream (\(error))"
                _ = Glibc.kill(pid, SIGKILL)
                break
            }
        }
        reap(ending: ending)
    }

    private func reap(ending: String) {
        if !destroyed { _ = Glibc.kill(pid, SIGKILL) }
        var status: Int32 = 0
        if destroyed {
            // It exits by itself after DESTROYED; do not wait for ever.
            var waited = 0
            while waitpid(pid, &status, WNOHANG) == 0 {
                if waited >= 2_000 { _ = Glibc.kill(pid, SIGKILL); _ = waitpid(pid, &status, 0); break }
                usleep(1_000)
                waited += 1
            }
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let how = killReason.withLock { $0 }.map { "was killed by the host (\($0))" } ?? describeExit(status)
        let reason = destroyed ? "exited after destroy" : "\(how) (its socket: \(ending))"
        exitDescription.withLock { $0 = reason }
        shutdown(channel.fd, Int32(SHUT_RDWR))
        exited.store(true, ordering: .releasing)
        let first = handshake.withLock { state -> Bool in
            guard state == nil else { return false }
            state = .ended(reason)
            return true
        }
        if first { handshakeDone.signal() }
        onEnd.withLock { $0 }?(self, reason)
    }

    /// Serves one frame; returns a protocol violation, or nil.
    private func handle(_ frame: Frame) -> String? {
        switch frame.kind {
        case .complete:
            if frame.flags & FrameFlag.tooLarge != 0 {
                context.calls.complete(callID: frame.id, status: ABIStatus.outcomeUnknown.rawValue, payload: HostContext.tooLarge(nil))
            } else {
                context.complete(callID: frame.id, status: frame.int32(at: 0), result: frame.rest(from: 4))
            }
        case .refused:
            context.calls.refused(frame.id, status: frame.int32(at: 0))
        case .log:
            context.log(level: frame.int32(at: 0), message: frame.rest(from: 4))
        case .secretGet:
            serveSecret(frame)
        case .httpSend:
            let request = Data(frame.rest(from: 0))
            let id = frame.id
            let channel = self.channel
            let context = self.context
            Task {
                let (status, document) = await context.performEgress(request)
                document.withUnsafeBytes { bytes in
                    try? channel.send(.httpResult, id: id, prefix: .int32(status), body: bytes)
                }
            }
        case .ready, .loadFailed:
            let outcome: Handshake
            do {
                outcome = frame.kind == .ready
                    ? .ready(try JSONDecoder().decode(RunnerReady.self, from: Data(frame.body)))
                    : .failed(try JSONDecoder().decode(RunnerLoadFailure.self, from: Data(frame.body)).failure)
            } catch {
                return "a \(frame.kind) frame that is not a valid document: \(error)"
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
        case .violation:
            let detail = String(decoding: frame.body.prefix(500), as: UTF8.self)
            logger.error("adapter protocol violation (seen in its runner): \(Redaction.maskingCardNumbers(in: detail))")
        case .load, .invoke, .cancel, .httpResult, .secretValue, .destroy:
            return "the host's own \(frame.kind) frame"
        }
        return nil
    }

    private func serveSecret(_ frame: Frame) {
        let capacity = Int(min(frame.uint64(at: 0), 1 << 20))
        let name = String(decoding: frame.rest(from: 8), as: UTF8.self)
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
        try? channel.send(.secretValue, id: frame.id, prefix: prefix, body: value)
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
