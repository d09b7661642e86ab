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
//     codec, and with Foundation's Codable for comparison).
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

/// ...and with Foundation's JSONEncoder/JSONDecoder, for comparison.
func foundationRoundTrips(_ n: Int) -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(n)
    for i in 0..<n {
        let start = nanoseconds()
        let encoded = try! JSONEncoder().encode(request(i))
        let decoded = try! JSONDecoder().decode(AuthorizeRequest.self, from: encoded)
        let result = AdapterResult(status: .succeeded, providerReference: "mock_0123456789abcdef", amount: decoded.amount, providerStatus: "SUCCEEDED")
        _ = try! JSONDecoder().decode(AdapterResult.self, from: try! JSONEncoder().encode(result))
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

let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-\(getpid())")
let loader = AdapterLoader(store: LibraryStore(directory: data))
let records = try ProviderRegistry.load(directory: manifests, loader: loader)
guard let mock = records.first(where: { $0.id == "mock" })?.adapter else {
    print("the mock adapter did not load from \(manifests.path): \(records.map { "\($0.id ?? "?"): \($0.failure?.description ?? $0.state.rawValue)" })")
    exit(1)
}

print("bridge-benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(calls) round trips")
let (direct, ffi) = measureCalls()
print(String(format: "(a) no-op C call   direct %.2f ns   ffi_call %.2f ns   ratio %.2fx   (ffi overhead %.2f ns)", direct, ffi, ffi / direct, ffi - direct))

_ = await bridgeRoundTrips(mock, 10_000)  // warm up
_ = baselineRoundTrips(10_000)
let baseline = baselineRoundTrips(calls)
let bridge = await bridgeRoundTrips(mock, calls)
let foundation = foundationRoundTrips(calls / 4)
let b50 = percentile(baseline, 0.50), b99 = percentile(baseline, 0.99)
let r50 = percentile(bridge, 0.50), r99 = percentile(bridge, 0.99)
print(String(format: "(b) authorize round trip through the bridge to mock   p50 %.1f µs   p99 %.1f µs", r50 / 1000, r99 / 1000))
print(String(format: "    baseline (same JSON work, no bridge)              p50 %.1f µs   p99 %.1f µs", b50 / 1000, b99 / 1000))
print(String(format: "    ratio bridge/baseline                             p50 %.2fx     p99 %.2fx", r50 / b50, r99 / b99))
print(String(format: "    the same JSON work with Foundation's Codable      p50 %.1f µs   p99 %.1f µs", percentile(foundation, 0.5) / 1000, percentile(foundation, 0.99) / 1000))
try? FileManager.default.removeItem(at: data)
