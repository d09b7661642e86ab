import Foundation
import GatewayPayloads
import Logging
import Synchronization

/// An adapter in a `gateway-runner` process of its own (`"isolation": "process"`),
/// supervised.
///
/// - A runner that ends while calls are in flight (segfault, abort, exit,
///   killed) resolves every one of them as lost: outcome unknown, so the
///   attempts stay pending and are reconciled, never failed over.
/// - It is restarted after an exponential backoff (100 ms doubling, at most
///   30 s); meanwhile calls are refused with `GW_E_BUSY`, which proves nothing
///   was sent.
/// - After `limits.max_crashes` ends within `limits.crash_window_s` it is
///   quarantined: no restart, calls refused, the provider excluded from routing
///   until ops re-enable it (a new instance).
/// - A call cancelled by the host (deadline, caller gone) that the runner has
///   not completed within `limits.cancel_grace_ms` gets the runner killed (and
///   restarted, counted as a crash); so does a runner that uses more CPU than
///   `limits.cpu_seconds_per_call` allows.
final class RunnerConnection: AdapterConnection {
    /// What to start a runner with.
    struct Launch: Sendable {
        var expected: AdapterBinding.Expectation
        var libraryCopy: String
        var sourcePath: String
        var sha256: String
        var config: String
        var limits: Manifest.Limits
        var network: Manifest.NetworkIsolation
        var exceptions: [SandboxLayer]
        /// The verified bytes, sealed: what every runner of this launch maps.
        var library: SealedLibrary
        /// ``AdapterLoader/simulatedSandboxRefusals``.
        var simulatedRefusals: String?

        /// LOAD for a runner starting now, with the secrets as they resolve now.
        func load(secrets: [String: [UInt8]]) -> RunnerLoad {
            RunnerLoad(expected: expected, library: libraryCopy, sourcePath: sourcePath, sha256: sha256, config: config, limits: limits,
                       secrets: secrets.mapValues { Data($0).base64EncodedString() })
        }

        var setup: RunnerProcess.Setup {
            .init(library: library, network: network, exceptions: exceptions, simulatedRefusals: simulatedRefusals)
        }
    }

    private struct State {
        var process: RunnerProcess?
        var health: AdapterHealth = .ready
        var sandbox: SandboxReport
        var pid: pid_t
        /// When recent ends happened (monotonic ns), for the quarantine window.
        var crashTimes: [UInt64] = []
        var crashes = 0
        /// Ends the host did not cause: the runner crashed or exited by itself.
        var endsOnItsOwn = 0
        var restarts = 0
        var closing = false
        /// Calls the host cancelled, and since when (monotonic ns).
        var cancelled: [UInt64: UInt64] = [:]
        /// The CPU budget (see ``checkCPU(now:)``), for the runner `cpuPid`.
        var cpuPid: pid_t = 0
        var cpuUsed = 0.0
        var cpuCredit = 0.0
        var cpuCallsSeen = 0
        var cpuLookedAt: UInt64 = 0
    }

    let isolation = Manifest.Isolation.process
    let launch: Launch
    let executable: String
    let context: HostContext
    let description: AdapterDescription
    let abiMajor: UInt32
    let abiMinor: UInt32
    private let state: Mutex<State>
    private let cancels = DispatchQueue(label: "runner-cancels")
    private let invokesSentCount = Atomic<Int>(0)
    /// How a lone caller waits for its answer (see ``awaitAnswerBriefly(_:from:)``).
    private let answerSpin = AdaptiveSpin(limit: RunnerConnection.answerSpinLimit)
    private var logger: Logger { context.logger }

    private init(launch: Launch, executable: String, context: HostContext, ready: RunnerReady, sandbox: SandboxReport) {
        self.launch = launch
        self.executable = executable
        self.context = context
        // Limited here too: the runner's own filtering runs in the adapter's process.
        description = ready.description.limited(toMinor: min(ready.abiMinor, SignatureTable.hostMinor))
        abiMajor = ready.abiMajor
        abiMinor = ready.abiMinor
        state = Mutex(State(sandbox: sandbox, pid: ready.pid))
    }

    /// Starts the first runner and waits for it to be ready.
    static func launch(_ launch: Launch, context: HostContext, runner: String?) throws(LoadFailure) -> RunnerConnection {
        let executable = try RunnerLocator.locate(configured: runner).get()
        let (process, ready) = try RunnerProcess.start(executable: executable, load: launch.load(secrets: context.runnerSecrets()), setup: launch.setup, context: context)
        let connection = RunnerConnection(launch: launch, executable: executable, context: context, ready: ready, sandbox: process.sandbox)
        context.calls.watch { [weak connection] now in
            connection?.checkCancelled(now: now)
            connection?.checkCPU(now: now)
        }
        connection.adopt(process, ready: ready)
        if process.sandbox.layers.contains(where: { !$0.inForce }) {
            context.logger.warning("adapter \(launch.expected.id) runs in its own process with the sandbox exceptions its manifest names: \(process.sandbox)")
        } else if let resources = process.sandbox.resources, resources.reason != nil {
            context.logger.notice("adapter \(launch.expected.id) runs in its own process with every sandbox layer; \(resources)")
        }
        return connection
    }

    var health: AdapterHealth { state.withLock { $0.health } }
    var blockedCalls: Int { 0 }
    /// The current runner's sandbox layers, as /proc shows them.
    var sandbox: SandboxReport { state.withLock { $0.sandbox } }
    /// Whether the current runner has no network of its own, and if not, why.
    var network: NetworkConfinement { sandbox.network }
    /// The current runner's pid (the last one's while restarting).
    var runnerPID: pid_t { state.withLock { $0.pid } }
    /// The process that runs the adapter in the current runner (inside its
    /// PID namespace, seen from here; the runner's own pid without one).
    var adapterPID: pid_t { state.withLock { $0.process?.adapterPID ?? $0.pid } }
    /// Whether the current runner was sent DESTROY (tests watch it).
    var destroyRequested: Bool { state.withLock { $0.process?.destroyRequested ?? false } }
    var crashes: Int { state.withLock { $0.crashes } }
    /// How many runners crashed or exited by themselves (not killed by the host).
    var endsOnItsOwn: Int { state.withLock { $0.endsOnItsOwn } }
    var restarts: Int { state.withLock { $0.restarts } }

    // MARK: Calls

    func invoke(_ callID: UInt64, _ operation: Int32, _ payload: UnsafeRawBufferPointer, timeout: UInt64) -> Int32 {
        guard let process = state.withLock({ $0.health == .ready ? $0.process : nil }) else { return ABIStatus.busy.rawValue }
        var prefix = FramePrefix.int32(operation)
        prefix.append(UInt32(min(timeout / 1_000_000, UInt64(UInt32.max))))
        do {
            try process.channel.send(.invoke, id: callID, prefix: prefix, body: payload)
        } catch {
            // The runner acts only on a whole frame, and this one did not
            // leave whole (a broken channel is shut down mid-frame): nothing was sent.
            switch error {
            case .tooLarge: return ABIStatus.invalidRequest.rawValue
            case .wouldBlock: return ABIStatus.busy.rawValue
            case .broken(let detail):
                process.kill(because: "its stream broke: \(detail)")
                return ABIStatus.busy.rawValue
            }
        }
        invokesSentCount.add(1, ordering: .relaxed)
        // A cancel queued while this frame was on its way may have overtaken
        // it (and been ignored as an unknown id): cancel again, after it.
        if context.calls.isAbandoned(callID) {
            cancel(callID)
        } else {
            awaitAnswerBriefly(callID, from: process)
        }
        return ABIStatus.ok.rawValue
    }

    /// How long a caller may spin for its runner's answer: one cross-process
    /// hop and an inline invoke on a slow 2-core VM (about 10 µs there; an
    /// answer that comes sooner ends the spin sooner, and one later than
    /// half of this is a miss: ``AdaptiveSpin``).
    static let answerSpinLimit: UInt64 = 50_000

    /// Spins a moment for the answer to `callID` before the caller suspends.
    ///
    /// `invoke` runs inside the caller's `withUnsafeContinuation` body (see
    /// ``AdapterInstance``). When the frame reader resumes the continuation
    /// before that body returns, the task never suspends and goes on on this
    /// thread. Otherwise the resume enqueues the task and wakes a pool thread:
    /// a third wake-up per call, which the raw ping-pong does not have, and
    /// this CPU went idle meanwhile. Only a lone call spins (the only one in
    /// flight on this adapter, and no other caller spinning in this host):
    /// with several in flight the pool has other work, and answers come in a
    /// stream the reader is awake for. The spin yields the CPU on every turn
    /// and stops spinning for an adapter that does not answer at once (one
    /// that calls its provider): ``AdaptiveSpin``.
    private func awaitAnswerBriefly(_ callID: UInt64, from process: RunnerProcess) {
        guard context.calls.outstanding == 1, SpinSlot.hostCallers.take() else { return }
        defer { SpinSlot.hostCallers.release() }
        _ = answerSpin.spin { process.answered(callID) }
    }

    /// INVOKE frames sent whole to a runner.
    var invokesSent: Int { invokesSentCount.load(ordering: .relaxed) }

    func cancel(_ callID: UInt64) {
        let process = state.withLock { state -> RunnerProcess? in
            guard let process = state.process else { return nil }
            state.cancelled[callID] = DeadlineSweeper.now()
            return process
        }
        guard let process else { return }
        cancels.async { try? process.channel.send(.cancel, id: callID) }
    }

    /// Kills the runner when a cancelled call is still owed past the grace.
    private func checkCancelled(now: UInt64) {
        let grace = UInt64(launch.limits.cancelGraceMilliseconds) * 1_000_000
        let late: (RunnerProcess, UInt64)? = state.withLock { state in
            guard !state.cancelled.isEmpty else { return nil }
            var late: UInt64?
            for (callID, since) in state.cancelled {
                if !context.calls.isAbandoned(callID) {
                    state.cancelled.removeValue(forKey: callID)
                } else if now > since, now - since > grace {
                    late = callID
                }
            }
            guard let late, let process = state.process else { return nil }
            state.cancelled.removeAll()
            return (process, late)
        }
        if let (process, callID) = late {
            logger.error("adapter \(launch.expected.id): its runner did not complete call \(callID) within \(launch.limits.cancelGraceMilliseconds) ms of the host cancelling it; killing the runner")
            process.kill(because: "call \(callID) not completed within the cancel grace")
        }
    }

    /// `limits.cpu_seconds_per_call`: a CPU budget in the runner's hands.
    /// Every call sent adds one call's worth; the budget never holds more than
    /// one call's worth beyond the calls in flight (so an idle runner saves up
    /// nothing); the CPU the runner used since the last look is spent from it.
    /// A runner that overdraws it is killed (a crash: its calls are lost,
    /// it restarts). Looked at no more than ten times a second.
    private func checkCPU(now: UInt64) {
        guard let perCall = launch.limits.cpuSecondsPerCall else { return }
        let budget = Double(perCall)
        let look: (RunnerProcess, pid_t)? = state.withLock { state in
            guard let process = state.process, now > state.cpuLookedAt, now - state.cpuLookedAt >= 100_000_000 else { return nil }
            state.cpuLookedAt = now
            return (process, process.adapterPID)
        }
        guard let (process, pid) = look, let used = Self.cpuSeconds(of: pid) else { return }
        let sent = invokesSent
        let overdrawn: Double? = state.withLock { state in
            if state.cpuPid != pid {
                state.cpuPid = pid
                state.cpuUsed = used
                state.cpuCredit = budget
                state.cpuCallsSeen = sent
                return nil
            }
            state.cpuCredit += budget * Double(sent - state.cpuCallsSeen)
            state.cpuCallsSeen = sent
            state.cpuCredit = min(state.cpuCredit, budget * Double(context.calls.outstanding + 1))
            state.cpuCredit -= used - state.cpuUsed
            state.cpuUsed = used
            return state.cpuCredit < 0 ? used : nil
        }
        if let used = overdrawn {
            logger.error("adapter \(launch.expected.id): its runner used more CPU than its limit of \(perCall) s per call (\(String(format: "%.1f", used)) s since it started); killing the runner")
            process.kill(because: "it used more than \(perCall) s of CPU per call")
        }
    }

    /// CPU seconds (user and system) a process has used, from /proc.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based, whole line).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    // MARK: Supervision

    /// Makes `process` the one that serves calls (or, when it already ended,
    /// handles that as a crash).
    private func adopt(_ process: RunnerProcess, ready: RunnerReady) {
        process.whenEnded { [weak self] process, reason in self?.ended(process, reason: reason, current: true) }
        let alreadyEnded = state.withLock { state -> Bool in
            if process.hasExited { return true }
            if state.closing {
                return true
            }
            state.process = process
            state.health = .ready
            state.sandbox = process.sandbox
            state.pid = ready.pid
            return false
        }
        if alreadyEnded {
            process.kill(because: "the connection is closing")
            if !state.withLock({ $0.closing }) { ended(process, reason: "ended as it started", current: false) }
        }
    }

    private enum Next { case ignore, closed, restart(attempt: Int, after: Duration), quarantine(String) }

    /// Counts an end (a crash, a kill, a failed restart) and decides what follows.
    private func recordEnd(_ state: inout State, reason: String) -> Next {
        state.cancelled.removeAll()
        if state.closing {
            state.health = .closed
            return .closed
        }
        let limits = launch.limits
        let now = DeadlineSweeper.now()
        state.crashes += 1
        state.crashTimes.append(now)
        let window = UInt64(limits.crashWindowSeconds) * 1_000_000_000
        state.crashTimes.removeAll { now > $0 && now - $0 > window }
        if state.crashTimes.count >= limits.maxCrashes {
            let why = "\(state.crashTimes.count) runner failures within \(limits.crashWindowSeconds) s (the last: \(reason))"
            state.health = .quarantined(reason: why)
            return .quarantine(why)
        }
        let attempt = state.crashTimes.count
        state.health = .restarting(attempt: attempt, reason: reason)
        return .restart(attempt: attempt, after: .milliseconds(min(100 * (1 << min(attempt - 1, 16)), 30_000)))
    }

    /// A runner ended: resolve its calls as lost, then restart or quarantine.
    private func ended(_ process: RunnerProcess, reason: String, current: Bool) {
        let next: Next = state.withLock { state in
            if current {
                guard state.process === process else { return .ignore }
                state.process = nil
            }
            if process.endedOnItsOwn { state.endsOnItsOwn += 1 }
            return recordEnd(&state, reason: reason)
        }
        if case .ignore = next { return }
        let lost = context.calls.connectionLost("its runner \(reason)")
        let tail = process.stderrTail.suffix(5).joined(separator: " | ")
        let stderr = tail.isEmpty ? "" : "; stderr: \(tail)"
        follow(next, detail: "its runner \(reason); \(lost) call(s) in flight left outcome unknown (to be reconciled)\(stderr)")
    }

    /// Logs an end and schedules the restart, if any.
    private func follow(_ next: Next, detail: String) {
        let id = launch.expected.id
        switch next {
        case .ignore, .closed:
            break
        case .quarantine(let why):
            logger.error("adapter \(id) quarantined: \(why); \(detail). Excluded from routing until ops re-enable it")
        case .restart(let attempt, let delay):
            logger.error("adapter \(id): \(detail); restarting in \(delay) (attempt \(attempt))")
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay.nanoseconds / 1_000_000))) { [weak self] in
                self?.restart()
            }
        }
    }

    private func restart() {
        guard state.withLock({ state in
            if case .restarting = state.health, !state.closing { return true }
            return false
        }) else { return }
        do {
            let (process, ready) = try RunnerProcess.start(executable: executable, load: launch.load(secrets: context.runnerSecrets()), setup: launch.setup, context: context)
            guard ready.description.limited(toMinor: min(ready.abiMinor, SignatureTable.hostMinor)) == description, ready.abiMajor == abiMajor else {
                process.kill(because: "it changed on restart")
                throw LoadFailure.runnerHandshake("the restarted runner describes a different adapter")
            }
            state.withLock { $0.restarts += 1 }
            adopt(process, ready: ready)
            logger.notice("adapter \(launch.expected.id): runner restarted (pid \(ready.pid))")
        } catch {
            let reason = "could not be restarted: \(error)"
            follow(state.withLock { recordEnd(&$0, reason: reason) }, detail: "its runner \(reason)")
        }
    }

    // MARK: Ending

    func destroy(grace: Duration) async -> Bool {
        let process = state.withLock { state -> RunnerProcess? in
            state.closing = true
            return state.process
        }
        guard let process else {
            state.withLock { $0.health = .closed }
            return true
        }
        process.sendDestroy()
        if !(await Poll.until(grace) { process.hasExited }) { process.kill(because: "destroy did not return within \(grace)") }
        state.withLock { $0.health = .closed }
        return process.destroyed
    }

    /// Dropped without a shutdown: its runner goes too.
    deinit {
        abandon(reason: "its instance was released")
    }

    func abandon(reason: String) {
        let process = state.withLock { state -> RunnerProcess? in
            state.closing = true
            state.health = .closed
            return state.process
        }
        process?.kill(because: reason)
    }
}
