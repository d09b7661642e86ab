// gateway-runner: one adapter library in a process of its own
// (`"isolation": "process"`). Started only by the gateway host, with fd 3 the
// runner's end of a socket pair, and only a whitelisted environment.
//
// Before main (CRunnerConfinement, an ELF constructor, while single-threaded):
// refuse to run by hand, die with the host (PDEATHSIG), and build the sandbox
// (user, network, IPC, PID and mount namespaces, an empty read-only root, a
// seccomp allowlist), each layer the manifest did not except.
// Then, here: read LOAD, refuse to go on when a layer is missing that the
// manifest did not except (before any adapter code runs), apply the
// manifest's limits, map the sealed library (fd 4) once its seals are
// checked, negotiate, create and describe with host services that are
// frames to the host, send READY, and serve frames until DESTROY or the
// host's end of file.
import CHostSupport
import CRunnerConfinement
import Foundation
import GatewayPayloads
import PluginHost

// The reader spins a moment for its next frame before it blocks (RunnerLoop).
let channel = FrameChannel(fd: RunnerProtocol.channelFD, spin: AdaptiveSpin(limit: RunnerLoop.spinLimit))
_ = fcntl(RunnerProtocol.channelFD, F_SETFD, FD_CLOEXEC)
let cookie = ProcessInfo.processInfo.environment[RunnerProtocol.cookieVariable] ?? ""

func refuse(_ failure: LoadFailure) -> Never {
    try? channel.send(.loadFailed, json: RunnerLoadFailure(cookie: cookie, failure: failure))
    exit(1)
}

// LOAD
let load: RunnerLoad
do {
    guard let frame = try channel.next() else { exit(0) }
    guard frame.kind == .load else { refuse(.runnerHandshake("the first frame was \(frame.kind), not LOAD")) }
    // The version first: a host of another runner protocol may send a LOAD this runner cannot read.
    if let spoken = RunnerProtocol.version(of: frame.body), spoken != RunnerProtocol.version {
        refuse(.runnerHandshake("the host speaks runner protocol \(spoken), this runner \(RunnerProtocol.version): use the gateway-runner built with this gateway"))
    }
    load = try frame.json(RunnerLoad.self)
} catch {
    refuse(.runnerHandshake("the LOAD frame is not valid: \(error)"))
}
guard load.protocol == RunnerProtocol.version else {
    refuse(.runnerHandshake("the host speaks runner protocol \(load.protocol), this runner \(RunnerProtocol.version): use the gateway-runner built with this gateway"))
}

// Fail closed: a layer the kernel refused and the manifest did not except.
let layers = (0..<Int32(GW_RUNNER_LAYER_COUNT)).map { index in
    SandboxClaim(layer: String(cString: gw_runner_layer_name(index)), inForce: gw_runner_layer_in_force(index) != 0,
                 excepted: gw_runner_layer_excepted(index) != 0, reason: gw_runner_layer_in_force(index) != 0 ? nil : String(cString: gw_runner_layer_reason(index)))
}
// A layer the kernel lacks altogether (Landlock on an older kernel) is absent, not refused.
let missing = layers.enumerated().filter { index, layer in !layer.inForce && !layer.excepted && gw_runner_layer_absent(Int32(index)) == 0 }.map(\.element)
if !missing.isEmpty {
    refuse(.sandboxIncomplete(layers: missing.map(\.layer), detail: missing.map { "\($0.layer): \($0.reason ?? "not in force")" }.joined(separator: "; ")))
}

// Limits.
func limit(_ resource: __rlimit_resource, _ value: Int, _ name: String) {
    var bound = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
    if setrlimit(__rlimit_resource_t(resource.rawValue), &bound) != 0 {
        refuse(.runnerHandshake("cannot apply the manifest's \(name) limit of \(value): \(String(cString: strerror(errno)))"))
    }
}
if let memory = load.limits.memoryMegabytes { limit(RLIMIT_DATA, memory << 20, "memory_mb") }
if let files = load.limits.openFiles { limit(RLIMIT_NOFILE, files, "open_files") }

// Map exactly the bytes that were hashed: the sealed copy the host handed over.
let libraryFD = RunnerProtocol.libraryFD
guard fcntl(libraryFD, F_SETFD, FD_CLOEXEC) == 0 else {
    refuse(.libraryUnreadable(path: load.library, detail: "the host handed over no library as fd \(libraryFD)"))
}
// The bytes to map are the host's sealed copy of what it verified (a memfd
// written from the bytes whose sha256 it checked, sealed against writes,
// shrinking and growing): with the four seals in place nothing can change
// them, so what is mapped is what was checked. Hashing them again here would
// only repeat the host's own check, at tens of milliseconds of every start
// for a library of some megabytes; the seals are checked instead.
guard gw_library_is_sealed(libraryFD) != 0 else {
    refuse(.libraryUnreadable(path: load.library, detail: "the library handed over as fd \(libraryFD) is not a sealed copy (writes, shrinking, growing and seals all sealed)"))
}
let digest = load.sha256
let binding: AdapterBinding
do { binding = try AdapterBinding.bind(path: "/proc/self/fd/\(libraryFD)", sourcePath: load.sourcePath, expected: load.expected) }
catch { refuse(error) }

// Serve frames from now on (create may already ask for a secret).
let services = RunnerServices(channel: channel, secrets: load.secrets)
let loop = RunnerLoop(channel: channel, services: services, binding: binding)
services.loop = loop
loop.start()

let table = HostServiceTable(backend: services, abiMajor: binding.abiMajor, abiMinor: binding.abiMinor)
let instance: UnsafeMutableRawPointer
let description: AdapterDescription
do { (instance, description) = try binding.instantiate(hostTable: table, config: load.config) }
catch { refuse(error) }
loop.serve(instance)

do {
    try channel.send(.ready, json: RunnerReady(
        cookie: cookie, abiMajor: binding.abiMajor, abiMinor: binding.abiMinor, sha256: digest,
        description: description, sandbox: layers, pid: getpid()))
} catch {
    exit(0)
}
while true { pause() }
