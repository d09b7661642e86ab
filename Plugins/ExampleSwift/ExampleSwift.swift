// example-swift: a payment adapter in Swift, written against gateway_abi.h
// alone (imported as the C module CGatewayABI; no SDK, no Foundation): the
// Swift twin of example-c. Its "provider" is simulated in process: it
// approves `visa` authorizations up to `decline_above` minor units, answers
// `verify` from the reference it issued, keeps idempotency keys, reads JSON
// strictly, and completes every accepted call exactly once from a thread of
// its own (Dispatch's).
//
// SwiftPM builds this file as the ExampleSwiftAdapter product. `gateway plugin
// new ID --lang swift-header` writes it renamed as ID.swift, beside gateway_abi.h and
// a module.modulemap naming the header CGatewayABI, and builds it alone with:
//   swiftc -emit-library -O -parse-as-library -module-name ExampleSwift -I . example-swift.swift -o libexample-swift.so
//
// A Swift trap (a failed precondition, an overflow, a force-unwrapped nil)
// cannot be caught: it ends the process. So this code never traps on input
// (every read is checked), and its manifest may run it in a process of its
// own (`isolation: process`), where a trap costs a call, not the host.

import CGatewayABI
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private let adapterID = "example-swift"
private let adapterVersion = "1.0.0"
private let currencies = ["SAR", "USD", "EUR"]
private let inFlightCapacity = 1024
private let replayCapacity = 50_000
private let maxKeyBytes = 255

// MARK: - Strict JSON (RFC 8259: UTF-8 only, no raw controls, no repeated names, 64 levels)

private indirect enum JSON: Equatable {
    case null, bool(Bool), number(String), string(String), array([JSON]), object([(String, JSON)])

    static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    subscript(name: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == name }?.1
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }

    /// An exact Int64: no fraction, no exponent, in range.
    var int64: Int64? {
        guard case .number(let text) = self, !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        return Int64(text)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> JSON? {
        var reader = Reader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.at == bytes.count ? value : nil
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skipWhitespace() {
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { at += 1 }
        }

        mutating func value(depth: Int) -> JSON? {
            guard depth < 64 else { return nil }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: "{"): return object(depth)
            case UInt8(ascii: "["): return array(depth)
            case UInt8(ascii: "\""): return string().map(JSON.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case let c? where c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39): return number()
            default: return nil
            }
        }

        mutating func literal(_ word: String, _ value: JSON) -> JSON? {
            for byte in word.utf8 {
                guard peek == byte else { return nil }
                at += 1
            }
            return value
        }

        mutating func digits() -> Int {
            let start = at
            while let c = peek, c >= 0x30 && c <= 0x39 { at += 1 }
            return at - start
        }

        mutating func number() -> JSON? {
            let start = at
            if peek == UInt8(ascii: "-") { at += 1 }
            if peek == UInt8(ascii: "0") { at += 1 } else if digits() == 0 { return nil }
            if peek == UInt8(ascii: ".") {
                at += 1
                guard digits() > 0 else { return nil }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                at += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { return nil }
            }
            return .number(String(decoding: bytes[start..<at], as: UTF8.self))
        }

        mutating func hex4() -> UInt32? {
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let c = peek else { return nil }
                let digit: UInt8
                switch c {
                case 0x30...0x39: digit = c - 0x30
                case 0x61...0x66: digit = c - 0x61 + 10
                case 0x41...0x46: digit = c - 0x41 + 10
                default: return nil
                }
                code = code * 16 + UInt32(digit)
                at += 1
            }
            return code
        }

        mutating func string() -> String? {
            at += 1
            var out: [UInt8] = []
            while let c = peek {
                switch c {
                case UInt8(ascii: "\""):
                    at += 1
                    return String(validating: out, as: UTF8.self) // nil when not UTF-8
                case UInt8(ascii: "\\"):
                    at += 1
                    guard let e = peek else { return nil }
                    at += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var code = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(code) {
                            guard peek == UInt8(ascii: "\\") else { return nil }
                            at += 1
                            guard peek == UInt8(ascii: "u") else { return nil }
                            at += 1
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(code) {
                            return nil
                        }
                        guard let scalar = Unicode.Scalar(code) else { return nil }
                        out.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20: return nil
                default:
                    out.append(c)
                    at += 1
                }
            }
            return nil
        }

        mutating func array(_ depth: Int) -> JSON? {
            at += 1
            var items: [JSON] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipWhitespace()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                guard peek == UInt8(ascii: "]") else { return nil }
                at += 1
                return .array(items)
            }
        }

        mutating func object(_ depth: Int) -> JSON? {
            at += 1
            var members: [(String, JSON)] = []
            var names: Set<String> = []
            skipWhitespace()
            if peek == UInt8(ascii: "}") { at += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\""), let name = string(), names.insert(name).inserted else { return nil }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return nil }
                at += 1
                guard let member = value(depth: depth + 1) else { return nil }
                members.append((name, member))
                skipWhitespace()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                guard peek == UInt8(ascii: "}") else { return nil }
                at += 1
                return .object(members)
            }
        }
    }
}

/// A JSON string literal, every control character escaped.
private func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

private func errorDocument(_ message: String) -> String { "{\"message\":\(quoted(message))}" }

// MARK: - The host's services, read within its struct_size

/// The host table's members this adapter uses, each read only when the
/// host's `struct_size` covers it (the versioning rule), as the C types.
private struct Host: @unchecked Sendable {
    let api: UnsafePointer<gw_host_api>

    private func member<T>(_ path: KeyPath<gw_host_api, T?>) -> T? {
        guard let offset = MemoryLayout<gw_host_api>.offset(of: path),
              Int(UnsafeRawPointer(api).load(as: UInt32.self)) >= offset + MemoryLayout<T?>.size else { return nil }
        return UnsafeRawPointer(api).load(fromByteOffset: offset, as: T?.self)
    }

    var canComplete: Bool { member(\.complete) != nil }

    func log(_ level: gw_log_level, _ message: String) {
        guard let log = member(\.log) else { return }
        var message = message
        message.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { log(level, $0.baseAddress, $0.count) }
        }
    }

    func complete(_ callID: UInt64, _ status: gw_status, _ result: String) {
        guard let complete = member(\.complete) else { return }
        var result = result
        result.withUTF8 { complete(callID, status, $0.baseAddress, $0.count) }
    }

    func randomBytes(_ count: Int) -> [UInt8]? {
        guard let random = member(\.random_bytes) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { random($0.baseAddress, $0.count) }
        return status == GW_OK ? bytes : nil
    }
}

// MARK: - The instance

private final class Adapter: Sendable {
    let host: Host
    let declineAbove: Int64

    struct Replay {
        var fingerprint: String
        var answer: (gw_status, String)?
        var sequence: Int
    }
    struct State {
        var inFlight: [UInt64: Bool] = [:]        // accepted calls not yet completed: cancelled?
        var replays: [String: Replay] = [:]       // idempotency key → first request and its answer
        var replayOrder: [(key: String, sequence: Int)] = []  // oldest first; stale entries skipped
        var replayStart = 0
        var nextSequence = 0
    }
    let state = Mutex(State())

    init(host: Host, declineAbove: Int64) {
        self.host = host
        self.declineAbove = declineAbove
    }

    enum Claim { case new, answered(gw_status, String), running, other, full }

    func claim(_ key: String, fingerprint: String) -> Claim {
        state.withLock { state in
            if let replay = state.replays[key] {
                guard replay.fingerprint == fingerprint else { return .other }
                guard let answer = replay.answer else { return .running }
                return .answered(answer.0, answer.1)
            }
            if state.replays.count >= replayCapacity {
                // Forget the oldest answered key (one still running stays);
                // entries of keys given up or claimed again since are stale.
                while state.replayStart < state.replayOrder.count {
                    let (oldest, sequence) = state.replayOrder[state.replayStart]
                    guard let replay = state.replays[oldest], replay.sequence == sequence else {
                        state.replayStart += 1
                        continue
                    }
                    guard replay.answer != nil else { return .full }
                    state.replays[oldest] = nil
                    state.replayStart += 1
                    break
                }
                guard state.replays.count < replayCapacity else { return .full }
                if state.replayStart > replayCapacity {
                    state.replayOrder.removeFirst(state.replayStart)
                    state.replayStart = 0
                }
            }
            state.nextSequence += 1
            state.replays[key] = Replay(fingerprint: fingerprint, sequence: state.nextSequence)
            state.replayOrder.append((key, state.nextSequence))
            return .new
        }
    }

    /// Records the first answer under a key; nil gives the key up (nothing was sent).
    func finish(_ key: String, _ answer: (gw_status, String)?) {
        state.withLock { state in
            if let answer { state.replays[key]?.answer = answer } else { state.replays[key] = nil }
        }
    }

    func invoke(_ callID: UInt64, _ operation: gw_operation, _ request: JSON) -> gw_status {
        switch operation {
        case GW_OP_AUTHORIZE: return authorize(callID, request)
        case GW_OP_VERIFY: return verify(callID, request)
        default: return GW_E_UNSUPPORTED
        }
    }

    private func refuse(_ callID: UInt64, _ why: String) -> gw_status {
        host.log(GW_LOG_WARNING, "call \(callID) refused: \(why)")
        return GW_E_INVALID_REQUEST
    }

    private func authorize(_ callID: UInt64, _ request: JSON) -> gw_status {
        guard let paymentID = request["paymentId"]?.string, !paymentID.isEmpty else { return refuse(callID, "paymentId is required") }
        guard request["orderId"]?.string?.isEmpty == false else { return refuse(callID, "orderId is required") }
        guard request["method"]?.string == "visa" else { return refuse(callID, "method must be \"visa\"") }
        // No capture operation: a manual-capture request is refused, not silently charged.
        guard request["capture"]?.string == "automatic" else { return refuse(callID, "capture must be \"automatic\"") }
        guard let value = request["amount"]?["value"]?.int64, value > 0 else {
            return refuse(callID, "amount.value must be a positive integer (minor units)")
        }
        guard let currency = request["amount"]?["currency"]?.string, currencies.contains(currency) else {
            return refuse(callID, "amount.currency must be one of \(currencies.joined(separator: ", "))")
        }
        guard let key = request["idempotencyKey"]?.string, !key.isEmpty, key.utf8.count <= maxKeyBytes else {
            return refuse(callID, "idempotencyKey must be 1 to \(maxKeyBytes) bytes")
        }
        // What goes to the provider: the same request under a key is this, whatever the member order.
        let fingerprint = "\(paymentID)\u{0}visa\u{0}automatic\u{0}\(value)\u{0}\(currency)"
        switch claim(key, fingerprint: fingerprint) {
        case .new: break
        case .answered(let status, let result):
            host.complete(callID, status, result)
            return GW_OK
        case .running:
            host.complete(callID, GW_E_OUTCOME_UNKNOWN, errorDocument("the first request under this idempotency key is still in progress"))
            return GW_OK
        case .other:
            return refuse(callID, "its idempotency key was already used with another request")
        case .full:
            return GW_E_BUSY
        }
        let accepted = state.withLock { state in
            guard state.inFlight.count < inFlightCapacity else { return false }
            state.inFlight[callID] = false
            return true
        }
        guard accepted else {
            finish(key, nil)
            return GW_E_BUSY
        }
        // Answered on a thread that is not the host's.
        DispatchQueue.global().async { self.answerAuthorize(callID, key: key, value: value, currency: currency) }
        return GW_OK
    }

    private func answerAuthorize(_ callID: UInt64, key: String, value: Int64, currency: String) {
        // Cancelled before the provider was asked: send nothing, give the key up.
        if state.withLock({ $0.inFlight[callID] == true }) {
            finish(key, nil)
            state.withLock { _ = $0.inFlight.removeValue(forKey: callID) }
            host.complete(callID, GW_E_CANCELLED, errorDocument("cancelled before anything was sent"))
            return
        }
        let status: gw_status
        let result: String
        if let random = host.randomBytes(8) {
            let approved = value <= declineAbove
            let reference = "exs_" + random.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + (approved ? "_s" : "_d")
            result = approved
                ? "{\"status\":\"succeeded\",\"providerReference\":\"\(reference)\",\"amount\":{\"value\":\(value),\"currency\":\"\(currency)\"},\"providerStatus\":\"APPROVED\"}"
                : "{\"status\":\"failed\",\"providerReference\":\"\(reference)\",\"problem\":{\"code\":\"card_declined\",\"message\":\"\(adapterID) declines amounts above \(declineAbove) minor units\",\"retryable\":false,\"safeToRetryElsewhere\":false,\"providerCode\":\"05\"},\"providerStatus\":\"DECLINED\"}"
            status = GW_OK
            finish(key, (status, result)) // the "provider" acted: a replay gets this answer
        } else {
            status = GW_E_INTERNAL
            result = errorDocument("no secure random bytes for the provider reference")
            finish(key, nil)
        }
        // A cancel that came after the provider answered changes nothing: the
        // real answer is known, so it is sent (the header: GW_E_CANCELLED
        // unless the answer already arrived).
        state.withLock { _ = $0.inFlight.removeValue(forKey: callID) }
        // The completion is the last thing this thread does with the instance.
        host.complete(callID, status, result)
    }

    /// Answered at once, before invoke() returns, from the reference this
    /// adapter issued: it cannot look a payment up by paymentId, so without a
    /// reference it refuses (saying "failed" would claim "not charged").
    private func verify(_ callID: UInt64, _ request: JSON) -> gw_status {
        guard request["paymentId"]?.string?.isEmpty == false else { return refuse(callID, "paymentId is required") }
        guard let reference = request["providerReference"]?.string else {
            return refuse(callID, "providerReference is required: this adapter finds payments only by the reference it issued")
        }
        let ours = reference.utf8.count == 22 && reference.hasPrefix("exs_")
            && reference.utf8.dropFirst(4).prefix(16).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        let result: String
        if ours && reference.hasSuffix("_s") {
            result = "{\"status\":\"succeeded\",\"providerReference\":\(quoted(reference)),\"providerStatus\":\"APPROVED\"}"
        } else if ours && reference.hasSuffix("_d") {
            result = "{\"status\":\"failed\",\"providerReference\":\(quoted(reference)),\"problem\":{\"code\":\"card_declined\",\"message\":\"\(adapterID) declined this payment\",\"retryable\":false,\"safeToRetryElsewhere\":false,\"providerCode\":\"05\"},\"providerStatus\":\"DECLINED\"}"
        } else {
            result = "{\"status\":\"failed\",\"problem\":{\"code\":\"unknown_payment\",\"message\":\"\(adapterID) does not know this provider reference\",\"retryable\":false,\"safeToRetryElsewhere\":false}}"
        }
        host.complete(callID, GW_OK, result)
        return GW_OK
    }

    func cancel(_ callID: UInt64) {
        state.withLock { state in
            if state.inFlight[callID] != nil { state.inFlight[callID] = true }
        }
    }
}

// MARK: - The table and the entry point

/// A copy of `text` from malloc, handed to the host (it calls the table's free()).
private func handOver(_ text: String, _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, _ outLength: UnsafeMutablePointer<Int>?) -> Bool {
    guard let out, let outLength, let buffer = malloc(max(text.utf8.count, 1))?.assumingMemoryBound(to: UInt8.self) else { return false }
    _ = UnsafeMutableBufferPointer(start: buffer, count: text.utf8.count).initialize(from: text.utf8)
    out.pointee = buffer
    outLength.pointee = text.utf8.count
    return true
}

private func adapter(_ instance: OpaquePointer?) -> Adapter? {
    instance.map { Unmanaged<Adapter>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

/// The table, in static storage (allocated once, never freed).
nonisolated(unsafe) private let table: UnsafeMutablePointer<gw_adapter_api> = {
    var api = gw_adapter_api()
    api.struct_size = UInt32(MemoryLayout<gw_adapter_api>.size)
    api.id = UnsafePointer(strdup(adapterID))
    api.version = UnsafePointer(strdup(adapterVersion))
    api.create = { host, config, configLength, outInstance, outError, outErrorLength in
        guard let host, let outInstance else { return GW_E_INVALID_REQUEST }
        let services = Host(api: host)
        guard services.canComplete else {
            _ = handOver("\(adapterID): the host services table has no complete()", outError, outErrorLength)
            return GW_E_INTERNAL
        }
        let parsed = config.flatMap { JSON.parse(UnsafeRawBufferPointer(start: $0, count: configLength)) }
        guard let parsed, case .object = parsed else {
            _ = handOver("\(adapterID): config must be a JSON object", outError, outErrorLength)
            return GW_E_INVALID_REQUEST
        }
        if case .object(let members) = parsed, let unknown = members.first(where: { $0.0 != "decline_above" }) {
            _ = handOver("\(adapterID): config.\(unknown.0) is not a member this adapter knows (decline_above)", outError, outErrorLength)
            return GW_E_INVALID_REQUEST
        }
        var declineAbove: Int64 = 1_000_000
        if let member = parsed["decline_above"] {
            guard let value = member.int64, value >= 0 else {
                _ = handOver("\(adapterID): config.decline_above must be a non-negative integer (minor units)", outError, outErrorLength)
                return GW_E_INVALID_REQUEST
            }
            declineAbove = value
        }
        services.log(GW_LOG_INFO, "\(adapterID) instance created (decline_above=\(declineAbove) minor units)")
        outInstance.pointee = OpaquePointer(Unmanaged.passRetained(Adapter(host: services, declineAbove: declineAbove)).toOpaque())
        return GW_OK
    }
    api.describe = { _, outJSON, outLength in
        guard outJSON != nil, outLength != nil else { return GW_E_INVALID_REQUEST }
        let document = "{\"id\":\"\(adapterID)\",\"version\":\"\(adapterVersion)\",\"methods\":[\"visa\"],\"operations\":[\"authorize\",\"verify\"],\"currencies\":[\(currencies.map { "\"\($0)\"" }.joined(separator: ","))]}"
        return handOver(document, outJSON, outLength) ? GW_OK : GW_E_INTERNAL // no memory for the copy
    }
    api.invoke = { instance, callID, operation, request, requestLength in
        guard let adapter = adapter(instance), request != nil || requestLength == 0 else { return GW_E_INVALID_REQUEST }
        guard operation == GW_OP_AUTHORIZE || operation == GW_OP_VERIFY else { return GW_E_UNSUPPORTED }
        guard requestLength <= Int(GW_MAX_REQUEST_BYTES),
              let parsed = JSON.parse(UnsafeRawBufferPointer(start: request, count: requestLength)), case .object = parsed else {
            adapter.host.log(GW_LOG_WARNING, "call \(callID) refused: the request is not a JSON object")
            return GW_E_INVALID_REQUEST
        }
        return adapter.invoke(callID, operation, parsed)
    }
    api.cancel = { instance, callID in adapter(instance)?.cancel(callID) }
    api.destroy = { instance in
        // Every accepted call completed before this; threads that completed
        // the last calls no longer touch the instance.
        if let instance { Unmanaged<Adapter>.fromOpaque(UnsafeRawPointer(instance)).release() }
    }
    api.free = { free($0) }
    let table = UnsafeMutablePointer<gw_adapter_api>.allocate(capacity: 1)
    table.initialize(to: api)
    return table
}()

/// The one exported symbol.
@_cdecl("gw_adapter_entry")
public func gwAdapterEntry(_ negotiation: UnsafeMutablePointer<gw_negotiation>?) -> gw_status {
    guard let negotiation else { return GW_E_INVALID_REQUEST }
    let size = Int(UnsafeRawPointer(negotiation).load(as: UInt32.self)) // struct_size, read alone
    guard size >= MemoryLayout<gw_negotiation>.offset(of: \.adapter_api)! + MemoryLayout<UnsafePointer<gw_adapter_api>?>.size else {
        return GW_E_VERSION // a struct this small is not ABI 1
    }
    negotiation.pointee.adapter_abi_major = UInt32(GW_ABI_VERSION_MAJOR)
    negotiation.pointee.adapter_abi_minor = 0 // ABI 1.0's operations only, like example-c
    negotiation.pointee.adapter_api = UnsafePointer(table)
    return negotiation.pointee.host_abi_major == UInt32(GW_ABI_VERSION_MAJOR) ? GW_OK : GW_E_VERSION
}
