// gateway-runner: one adapter library in a process of its own
// (`"isolation": "process"`). Started only by the gateway host, with fd 3 the
// runner's end of a socket pair, and only a whitelisted environment.
//
// Before main (CRunnerConfinement, an ELF constructor, while single-threaded):
// refuse to run by hand, enter a network namespace of its own unless the
// manifest says "isolation_network": "host", die with the host (PDEATHSIG).
// Then, here: read LOAD, apply the manifest's limits, map the content-addressed
// copy after hashing it through the descriptor that is mapped, negotiate,
// create and describe with host services that are frames to the host, send
// READY, and serve frames until DESTROY or the host's end of file.
import CRunnerConfinement
import Foundation
import GatewayPayloads
import PluginHost

let channel = FrameChannel(fd: RunnerProtocol.channelFD)
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
    load = try JSONDecoder().decode(RunnerLoad.self, from: Data(frame.body))
} catch {
    refuse(.runnerHandshake("the LOAD frame is not valid: \(error)"))
}
guard load.protocol == RunnerProtocol.version else {
    refuse(.runnerHandshake("the host speaks runner protocol \(load.protocol), this runner \(RunnerProtocol.version): use the gateway-runner built with this gateway"))
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

// Map exactly the bytes that were hashed.
let libraryFD = open(load.library, O_RDONLY | O_CLOEXEC)
guard libraryFD >= 0 else {
    refuse(.libraryUnreadable(path: load.library, detail: String(cString: strerror(errno))))
}
/// The sha256 of the whole file (its bytes are not kept).
func digestOfLibrary() -> String {
    let handle = FileHandle(fileDescriptor: libraryFD, closeOnDealloc: false)
    do { return LibraryStore.sha256Hex(try handle.readToEnd() ?? Data()) }
    catch { refuse(.libraryUnreadable(path: load.library, detail: "\(error)")) }
}
let digest = digestOfLibrary()
guard digest == load.sha256 else {
    refuse(.digestMismatch(path: load.library, expected: load.sha256, actual: digest))
}
let binding: AdapterBinding
do { binding = try AdapterBinding.bind(path: "/proc/self/fd/\(libraryFD)", sourcePath: load.sourcePath, expected: load.expected) }
catch { refuse(error) }

// Serve frames from now on (create may already ask for a secret).
let services = RunnerServices(channel: channel)
let loop = RunnerLoop(channel: channel, services: services, binding: binding)
services.loop = loop
loop.start()

let table = HostServiceTable(backend: services, abiMajor: binding.abiMajor, abiMinor: binding.abiMinor)
let instance: UnsafeMutableRawPointer
let description: AdapterDescription
do { (instance, description) = try binding.instantiate(hostTable: table, config: load.config) }
catch { refuse(error) }
loop.serve(instance)

let network = NetworkConfinement(
    confined: gw_runner_network_confined() != 0,
    reason: gw_runner_network_confined() != 0 ? nil : String(cString: gw_runner_network_reason()))
do {
    try channel.send(.ready, json: RunnerReady(
        cookie: cookie, abiMajor: binding.abiMajor, abiMinor: binding.abiMinor, sha256: digest,
        description: description, network: network, pid: getpid()))
} catch {
    exit(0)
}
while true { pause() }
