import Foundation
import Synchronization

/// Finds the `gateway-runner` executable: the loader's setting, then
/// `$GATEWAY_RUNNER`, then beside the running executable (which is also where
/// SwiftPM puts it beside `gateway` and the test bundle).
package enum RunnerLocator {
    package static let executableName = "gateway-runner"

    package static func locate(configured: String?) -> Result<String, LoadFailure> {
        var tried: [String] = []
        let candidates = [configured, ProcessInfo.processInfo.environment["GATEWAY_RUNNER"]].compactMap { $0 }
            + [PluginSearchPath.executableDirectory?.appendingPathComponent(executableName).path].compactMap { $0 }
        for path in candidates {
            tried.append(path)
            if access(path, X_OK) == 0 { return .success(path) }
        }
        return .failure(.runnerUnavailable("the \(executableName) executable was not found or is not executable; tried \(tried.joined(separator: ", ")) (build it with `swift build`, or set GATEWAY_RUNNER)"))
    }
}

/// One started runner process: its pid, the host's end of its socket pair,
/// and the read end of its stderr.
package struct SpawnedRunner: Sendable {
    package var pid: pid_t
    package var channelFD: Int32
    package var stderrFD: Int32
}

/// Starts runner processes, always from one long-lived thread of its own.
///
/// A runner asks for `SIGKILL` when its parent dies (`PR_SET_PDEATHSIG`), and
/// Linux means the parent *thread*: a runner spawned from a pool thread that
/// later exits would be killed with it. So every spawn happens here.
package final class RunnerSpawner: @unchecked Sendable {
    package static let shared = RunnerSpawner()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                wake.wait()
                let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                job?()
            }
        }
        thread.name = "runner-spawner"
        thread.start()
    }

    /// Starts `executable` with fd 3 = the runner's end of a new socket pair,
    /// fd 4 = `library` (the sealed copy it maps), stdin = /dev/null, stdout
    /// and stderr = another socket pair, and only `environment` (the runner
    /// closes every other descriptor it inherited before it loads anything);
    /// with `cgroup`, fd 5 = its leaf's `cgroup.procs`.
    package func spawn(executable: String, environment: [String: String], library: Int32, cgroup: Int32? = nil) -> Result<SpawnedRunner, LoadFailure> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<SpawnedRunner, LoadFailure>?>(nil)
        jobs.withLock { $0.append {
            let outcome = Self.spawnNow(executable: executable, environment: environment, library: library, cgroup: cgroup)
            result.withLock { $0 = outcome }
            done.signal()
        } }
        wake.signal()
        done.wait()
        return result.withLock { $0! }
    }

    private static func spawnNow(executable: String, environment: [String: String], library: Int32, cgroup: Int32?) -> Result<SpawnedRunner, LoadFailure> {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(.runnerUnavailable("socketpair failed: \(String(cString: strerror(errno)))"))
        }
        // Its stderr: a socket pair too (close-on-exec from the start, which
        // pipe() is not; the Swift Glibc module has no pipe2).
        var errPipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &errPipe) == 0 else {
            close(pair[0]); close(pair[1])
            return .failure(.runnerUnavailable("socketpair failed: \(String(cString: strerror(errno)))"))
        }
        defer {
            close(pair[1])
            close(errPipe[1])
        }
        // Room for bursts (the host never waits for a runner that stopped
        // reading: its sends fail instead, see FrameChannel).
        var size: Int32 = 1 << 20
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))

        // Every descriptor handed over is first moved above the numbers it is
        // given (0 to 5), so no dup2 below overwrites another before it is copied.
        let high = ([pair[1], errPipe[1], library] + (cgroup.map { [$0] } ?? [])).map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        defer { high.forEach { if $0 >= 0 { close($0) } } }
        guard high.allSatisfy({ $0 >= 0 }) else {
            close(pair[0]); close(errPipe[0])
            return .failure(.runnerUnavailable("cannot prepare the runner's descriptors: \(String(cString: strerror(errno)))"))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, high[1], 1)
        posix_spawn_file_actions_adddup2(&actions, high[1], 2)
        posix_spawn_file_actions_adddup2(&actions, high[0], RunnerProtocol.channelFD)
        posix_spawn_file_actions_adddup2(&actions, high[2], RunnerProtocol.libraryFD)
        if high.count > 3 { posix_spawn_file_actions_adddup2(&actions, high[3], RunnerProtocol.cgroupFD) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // A process group of its own: the host kills the runner and anything it forked at once.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let arguments = [executable]
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = variables.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        var status = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        // "Text file busy": another process still has the executable open for
        // writing (a child forked elsewhere in the host that inherited the
        // descriptor of a file just written, until it execs). It passes.
        var retries = 0
        while status == ETXTBSY, retries < 10 {
            usleep(20_000)
            retries += 1
            status = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        }
        guard status == 0 else {
            close(pair[0]); close(errPipe[0])
            return .failure(.runnerUnavailable("cannot start \(executable): \(String(cString: strerror(status)))"))
        }
        return .success(SpawnedRunner(pid: pid, channelFD: pair[0], stderrFD: errPipe[0]))
    }
}

/// How a runner process ended, from its wait status.
package func describeExit(_ status: Int32) -> String {
    let signal = status & 0x7f
    if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
    let names: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL", SIGBUS: "SIGBUS",
                                  SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU"]
    return "killed by signal \(signal)\(names[signal].map { " (\($0))" } ?? "")"
}
