// The bridge benchmark: what crossing the plugin boundary costs.
//
//   swift build -c release && .build/release/bridge-benchmark [--manifests DIR] [--calls N]
//
// (a) a no-op C function called directly through a function pointer, versus
//     through ffi_call with a prepared cif, in ns per call;
// (b) a full authorize round trip through the bridge to the mock adapter (host
//     encodes the request JSON, adapter decodes it and answers, host decodes the
//     answer), p50 and p99, against a baseline measured in the same run: the
//     same four JSON steps done in-process with no bridge (with the payload
//     codec).
// (c) isolation: the same authorize round trip to the mock in process and
//     through its runner ("isolation": "process"), and as the floor a raw
//     socket-pair ping-pong of the same request and result bytes between this
//     process and a child (this program, started with --echo), p50 and p99;
//     the isolation overhead (isolated minus in-process) as a multiple of the
//     raw ping-pong; the runner's resident memory. `--isolation-only` skips (a) and (b).
import CBenchSupport
import CFFI
import Foundation
import GatewayPayloads
import PluginHost

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: String) -> String {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return fallback }
    return arguments[i + 1]
}
let manifests = URL(fileURLWithPath: option("--manifests", "./manifests"), isDirectory: true)
let calls = Int(option("--calls", "200000"))!

// The ping-pong peer: read a length-prefixed request on fd 3, answer with
// `--echo N` bytes, until end of file.
if let echo = arguments.firstIndex(of: "--echo"), echo + 1 < arguments.count {
    let answer = [UInt8](repeating: UInt8(ascii: "a"), count: Int(arguments[echo + 1])!)
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    func readFully(_ count: Int) -> Bool {
        var got = 0
        while got < count {
            let n = buffer.withUnsafeMutableBytes { read(3, $0.baseAddress! + got, count - got) }
            if n <= 0 { return false }
            got += n
        }
        return true
    }
    var reply = withUnsafeBytes(of: UInt32(answer.count).littleEndian) { Array($0) } + answer
    while readFully(4) {
        let length = Int(buffer.withUnsafeBytes { $0.load(as: UInt32.self) }.littleEndian)
        guard readFully(length) else { break }
        _ = reply.withUnsafeMutableBytes { write(3, $0.baseAddress!, $0.count) }
    }
    exit(0)
}

func nanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
}

// MARK: (a) direct versus ffi_call

func measureCalls() -> (direct: Double, ffi: Double) {
    let iterations = 20_000_000
    let noop: @convention(c) (UnsafeMutableRawPointer?, UInt64) -> UInt64 = gw_bench_noop
    // Read the pointer through an opaque global so the call cannot be folded.
    let pointer = unsafeBitCast(noop, to: UnsafeRawPointer.self)
    var rounds: [(Double, Double)] = []
    for _ in 0..<5 {
        let direct = unsafeBitCast(pointer, to: (@convention(c) (UnsafeMutableRawPointer?, UInt64) -> UInt64).self)
        var sink: UInt64 = 0
        var start = nanoseconds()
        for i in 0..<UInt64(iterations) { sink &+= direct(nil, i) }
        let directNs = Double(nanoseconds() - start) / Double(iterations)

        let types = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: 2)
        types[0] = gw_ffi_type_pointer()
        types[1] = gw_ffi_type_uint64()
        let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
        precondition(ffi_prep_cif(cif, gw_ffi_default_abi(), 2, gw_ffi_type_uint64(), types) == FFI_OK)
        let function = unsafeBitCast(pointer, to: (@convention(c) () -> Void).self)
        var context: UnsafeMutableRawPointer? = nil
        var value: UInt64 = 0
        var result: UInt64 = 0
        start = nanoseconds()
        withUnsafeMutablePointer(to: &context) { c in
            withUnsafeMutablePointer(to: &value) { v in
                var args: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) = (UnsafeMutableRawPointer(c), UnsafeMutableRawPointer(v))
                withUnsafeMutablePointer(to: &args) { a in
                    a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) { a in
                        for i in 0..<UInt64(iterations) {
                            v.pointee = i
                            ffi_call(cif, function, &result, a)
                            sink &+= result
                        }
                    }
                }
            }
        }
        let ffiNs = Double(nanoseconds() - start) / Double(iterations)
        if sink == 42 { print("") }
        rounds.append((directNs, ffiNs))
    }
    let direct = rounds.map(\.0).sorted()[rounds.count / 2]
    let ffi = rounds.map(\.1).sorted()[rounds.count / 2]
    return (direct, ffi)
}

// MARK: (b) round trip to the mock adapter

func request(_ i: Int) -> AuthorizeRequest {
    AuthorizeRequest(
        paymentId: "pay_\(i)", idempotencyKey: "key_\(i)", amount: Money(value: 1000 + Int64(i % 100), currency: "SAR"),
        method: "mada", country: "SA", orderId: "order_\(i)", capture: .automatic,
        instrument: ["scenario": .string("success")], returnUrl: "https://merchant.example/return")
}

/// The same JSON work with no bridge (encode the request, decode it, encode a
/// result, decode it), with the payload codec the bridge uses...
func baselineRoundTrips(_ n: Int) -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(n)
    for i in 0..<n {
        let start = nanoseconds()
        let encoded = Data(request(i).jsonBytes())
        let decoded = try! AuthorizeRequest(jsonData: encoded)
        let result = AdapterResult(status: .succeeded, providerReference: "mock_0123456789abcdef", amount: decoded.amount, providerStatus: "SUCCEEDED")
        _ = try! AdapterResult(jsonData: Data(result.jsonBytes()))
        samples.append(nanoseconds() - start)
    }
    return samples.sorted()
}

func bridgeRoundTrips(_ adapter: AdapterInstance, _ n: Int) async -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(n)
    for i in 0..<n {
        let start = nanoseconds()
        let result = try! await adapter.call(.authorize, request(i))
        precondition(result.status == .succeeded)
        samples.append(nanoseconds() - start)
    }
    return samples.sorted()
}

/// The floor: the same request and result bytes over a socket pair to another
/// process, with nothing else (no frames, no threads, no JSON).
func pingPongRoundTrips(_ n: Int, resultBytes: Int) -> [UInt64] {
    var pair: [Int32] = [-1, -1]
    precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, pair[1], 3)
    posix_spawn_file_actions_addclose(&actions, pair[0])
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? arguments[0]
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup(exe), strdup("--echo"), strdup("\(resultBytes)"), nil]
    var pid: pid_t = 0
    precondition(posix_spawn(&pid, exe, &actions, nil, &argv, environ) == 0)
    close(pair[1])
    let fd = pair[0]
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var samples: [UInt64] = []
    samples.reserveCapacity(n)
    for i in 0..<(n + 10_000) {
        let body = request(i).jsonBytes()
        let framed = withUnsafeBytes(of: UInt32(body.count).littleEndian) { Array($0) } + body
        let start = nanoseconds()
        _ = framed.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        var got = 0
        while got < 4 + resultBytes {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, 4 + resultBytes - got) }
            precondition(n > 0)
            got += n
        }
        if i >= 10_000 { samples.append(nanoseconds() - start) }
    }
    close(fd)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return samples.sorted()
}

/// Resident memory of a process, in MiB.
func residentMiB(_ pid: Int32) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes / 1024
}

let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-\(getpid())")
let loader = AdapterLoader(store: LibraryStore(directory: data))
let records = try ProviderRegistry.load(directory: manifests, loader: loader)
guard let mock = records.first(where: { $0.id == "mock" })?.adapter else {
    print("the mock adapter did not load from \(manifests.path): \(records.map { "\($0.id ?? "?"): \($0.failure?.description ?? $0.state.rawValue)" })")
    exit(1)
}

print("bridge-benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(calls) round trips")
if arguments.contains("--isolation-only") {
    await measureIsolation()
    try? FileManager.default.removeItem(at: data)
    exit(0)
}
let (direct, ffi) = measureCalls()
print(String(format: "(a) no-op C call   direct %.2f ns   ffi_call %.2f ns   ratio %.2fx   (ffi overhead %.2f ns)", direct, ffi, ffi / direct, ffi - direct))

_ = await bridgeRoundTrips(mock, 10_000)  // warm up
_ = baselineRoundTrips(10_000)
let baseline = baselineRoundTrips(calls)
let bridge = await bridgeRoundTrips(mock, calls)
let b50 = percentile(baseline, 0.50), b99 = percentile(baseline, 0.99)
let r50 = percentile(bridge, 0.50), r99 = percentile(bridge, 0.99)
print(String(format: "(b) authorize round trip through the bridge to mock   p50 %.1f µs   p99 %.1f µs", r50 / 1000, r99 / 1000))
print(String(format: "    baseline (same JSON work, no bridge)              p50 %.1f µs   p99 %.1f µs", b50 / 1000, b99 / 1000))
print(String(format: "    ratio bridge/baseline                             p50 %.2fx     p99 %.2fx", r50 / b50, r99 / b99))
await measureIsolation()
try? FileManager.default.removeItem(at: data)

// MARK: (c) isolation

func measureIsolation() async {
    // The same manifests, with the mock in a process of its own: in its full
    // sandbox, and with every layer but the network excepted (the runner as
    // it was before the sandbox), measured alternately in this run.
    let isolatedManifests = data.appendingPathComponent("isolated-manifests")
    let bareManifests = data.appendingPathComponent("bare-manifests")
    try? FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    for (folder, members) in [(isolatedManifests, [String]()), (bareManifests, ["filesystem", "pid", "ipc", "syscalls", "landlock"])] {
        try! FileManager.default.copyItem(at: manifests, to: folder)
        _ = try! ManifestCatalogue.setMember("isolation", to: "\"process\"", ofProvider: "mock", in: folder)
        if !members.isEmpty {
            let list = "[" + members.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            _ = try! ManifestCatalogue.setMember("sandbox_exceptions", to: list, ofProvider: "mock", in: folder)
        }
    }
    func loadMock(_ folder: URL) -> AdapterInstance {
        let records = try! ProviderRegistry.load(directory: folder, loader: loader)
        guard let adapter = records.first(where: { $0.id == "mock" })?.adapter, adapter.runner != nil else {
            print("the isolated mock did not load: \(records.map { "\($0.id ?? "?"): \($0.failure?.description ?? $0.state.rawValue)" })")
            exit(1)
        }
        return adapter
    }
    let isolated = loadMock(isolatedManifests)
    let bare = loadMock(bareManifests)
    print("    sandbox of the isolated mock: \(isolated.sandbox.map { "\($0)" } ?? "?")")
    let resultBytes = AdapterResult(status: .succeeded, providerReference: "mock_0123456789abcdef", amount: Money(value: 1000, currency: "SAR"),
                                    providerStatus: "SUCCEEDED").jsonBytes().count
    // Alternate the four, five passes each, so drift hits all alike.
    var inProcess: [UInt64] = [], throughRunner: [UInt64] = [], throughBare: [UInt64] = [], raw: [UInt64] = []
    _ = await bridgeRoundTrips(mock, 10_000)
    _ = await bridgeRoundTrips(isolated, 10_000)
    _ = await bridgeRoundTrips(bare, 10_000)
    let pass = max(calls / 5, 1000)
    for _ in 0..<5 {
        inProcess += await bridgeRoundTrips(mock, pass)
        throughRunner += await bridgeRoundTrips(isolated, pass)
        throughBare += await bridgeRoundTrips(bare, pass)
        raw += pingPongRoundTrips(pass, resultBytes: resultBytes)
    }
    inProcess.sort(); throughRunner.sort(); throughBare.sort(); raw.sort()
    let i50 = percentile(inProcess, 0.5), i99 = percentile(inProcess, 0.99)
    let t50 = percentile(throughRunner, 0.5), t99 = percentile(throughRunner, 0.99)
    let u50 = percentile(throughBare, 0.5), u99 = percentile(throughBare, 0.99)
    let p50 = percentile(raw, 0.5), p99 = percentile(raw, 0.99)
    print(String(format: "(c) authorize to mock in process                      p50 %.1f µs   p99 %.1f µs", i50 / 1000, i99 / 1000))
    print(String(format: "    the same through its runner (isolation process)   p50 %.1f µs   p99 %.1f µs", t50 / 1000, t99 / 1000))
    print(String(format: "    through a runner with only the network layer      p50 %.1f µs   p99 %.1f µs", u50 / 1000, u99 / 1000))
    print(String(format: "    raw socket-pair ping-pong, same bytes (the floor) p50 %.1f µs   p99 %.1f µs", p50 / 1000, p99 / 1000))
    print(String(format: "    isolation overhead (isolated - in process)        p50 %.1f µs = %.2fx the ping-pong   p99 %.1f µs = %.2fx",
                 (t50 - i50) / 1000, (t50 - i50) / p50, (t99 - i99) / 1000, (t99 - i99) / p99))
    print(String(format: "    the same with only the network layer              p50 %.1f µs = %.2fx the ping-pong   p99 %.1f µs = %.2fx",
                 (u50 - i50) / 1000, (u50 - i50) / p50, (u99 - i99) / 1000, (u99 - i99) / p99))
    print(String(format: "    the whole sandbox's share: overhead full / network-only   p50 %.2fx   p99 %.2fx", (t50 - i50) / (u50 - i50), (t99 - i99) / (u99 - i99)))
    let adapterPID = isolated.adapterProcess ?? 0
    print(String(format: "    runner resident memory %.1f MiB (adapter pid %d, supervisor and init %.1f MiB); this host %.1f MiB",
                 residentMiB(adapterPID), adapterPID, residentMiB(isolated.runner!.pid), residentMiB(getpid())))
    await isolated.shutdown(grace: .seconds(2))
    await bare.shutdown(grace: .seconds(2))

    // Runner start, spawn to READY: loads of the isolated mock, alternately in
    // its full sandbox and with only the network layer.
    func startTimes(_ folder: URL) async -> UInt64 {
        let manifestURL = folder.appendingPathComponent("mock.json")
        let manifest = try! ManifestFile.read(manifestURL).get()
        let started = DispatchTime.now().uptimeNanoseconds
        guard case .success(let adapter) = loader.load(manifest, from: manifestURL) else { print("the isolated mock did not start"); exit(1) }
        let took = DispatchTime.now().uptimeNanoseconds - started
        await adapter.shutdown(grace: .seconds(2))
        return took
    }
    var full: [UInt64] = [], networkOnly: [UInt64] = []
    for _ in 0..<20 {
        full.append(await startTimes(isolatedManifests))
        networkOnly.append(await startTimes(bareManifests))
    }
    full.sort(); networkOnly.sort()
    print(String(format: "    runner start (load to ready, 20 each)  full sandbox p50 %.1f ms  p99 %.1f ms   network only p50 %.1f ms   ratio %.2fx",
                 percentile(full, 0.5) / 1e6, percentile(full, 0.99) / 1e6, percentile(networkOnly, 0.5) / 1e6,
                 percentile(full, 0.5) / percentile(networkOnly, 0.5)))
}
