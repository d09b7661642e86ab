import CGatewayABI
import Foundation

/// The host's services, as the adapter sees them: logging, HTTP egress,
/// secrets, clocks and randomness. Safe to use from any thread.
public struct AdapterHost: @unchecked Sendable {
    let table: UnsafePointer<gw_host_api>

    init(table: UnsafePointer<gw_host_api>) {
        self.table = table
    }

    public enum LogLevel: Int32, Sendable {
        case trace = 0, debug, info, warning, error
    }

    /// Writes a log line attributed to this adapter. Never log card data or secrets.
    public func log(_ level: LogLevel, _ message: String) {
        var message = message
        message.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { table.pointee.log?(level.rawValue, $0.baseAddress, $0.count) }
        }
    }

    /// The value of the manifest-declared secret `name`, or nil.
    public func secret(_ name: String) -> [UInt8]? {
        guard let get = table.pointee.secret_get else { return nil }
        var name = name
        return name.withUTF8 { nameBytes -> [UInt8]? in
            nameBytes.withMemoryRebound(to: CChar.self) { namePointer -> [UInt8]? in
                var length = 0
                var status = get(namePointer.baseAddress, namePointer.count, nil, 0, &length)
                guard status == GW_E_BUFFER_TOO_SMALL || status == GW_OK else { return nil }
                var buffer = [UInt8](repeating: 0, count: length)
                // The copy handed out is the caller's to wipe; this one is wiped here.
                defer { buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
                status = buffer.withUnsafeMutableBufferPointer { get(namePointer.baseAddress, namePointer.count, $0.baseAddress, length, &length) }
                return status == GW_OK ? Array(buffer.prefix(length)) : nil
            }
        }
    }

    /// Whether the manifest-declared secret `name` resolves to a value that
    /// is not empty. The value read is wiped before this returns.
    public func hasSecret(_ name: String) -> Bool {
        withSecret(name) { _ in true } ?? false
    }

    /// Runs `body` with the value of secret `name` (nil when it is missing
    /// or empty), and wipes that value when `body` returns or throws.
    public func withSecret<T>(_ name: String, _ body: ([UInt8]) throws -> T) rethrows -> T? {
        guard var value = secret(name) else { return nil }
        defer { value.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        guard !value.isEmpty else { return nil }
        return try body(value)
    }

    /// Wall-clock time.
    public var now: Date {
        let ns = table.pointee.clock_unix_ns?() ?? 0
        return Date(timeIntervalSince1970: Double(ns) / 1e9)
    }

    /// Monotonic nanoseconds, for durations.
    public var monotonicNanoseconds: UInt64 { table.pointee.clock_monotonic_ns?() ?? 0 }

    /// `count` cryptographically secure random bytes.
    public func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { table.pointee.random_bytes?($0.baseAddress, count) ?? GW_E_UNSUPPORTED }
        if status != GW_OK {
            var generator = SystemRandomNumberGenerator()
            for i in bytes.indices { bytes[i] = generator.next() }
        }
        return bytes
    }

    /// A random identifier: `prefix` and 16 hex digits.
    public func randomID(prefix: String) -> String {
        var id = prefix
        id.reserveCapacity(prefix.utf8.count + 16)
        for byte in randomBytes(8) {
            id.unicodeScalars.append(Self.hexDigits[Int(byte >> 4)])
            id.unicodeScalars.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return id
    }

    private static let hexDigits = Array("0123456789abcdef".unicodeScalars)

    /// Sends an HTTP request through the host (allowlist, TLS and timeouts are
    /// the host's). Marks the current call as having reached the network.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let send = table.pointee.http_send else { throw AdapterError.unsupported("the host offers no HTTP egress") }
        CallScope.current?.markSent()
        let document = request.jsonBytes()
        return try await withCheckedThrowingContinuation { continuation in
            let box = Unmanaged.passRetained(HTTPContinuation(continuation)).toOpaque()
            document.withUnsafeBytes { bytes in
                send(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, httpCallbackThunk, box)
            }
        }
    }

    /// ABI 1.1: asks the host to check and decrypt a wallet payment token
    /// (`wallet`: `applepay`) with the merchant keys this adapter's manifest
    /// names among its secrets (docs/wallet-tokens.md). Answers the payment
    /// data with its account number whole: for this adapter alone, never to
    /// be logged. Throws ``WalletTokenRefusal`` when the host refuses the
    /// token (its code says why), ``AdapterError/unsupported(_:)`` when the
    /// host predates the service. Sends nothing anywhere.
    /// - Parameter paymentID: the payment it pays (the request's `paymentId`): the host
    ///   opens a token for one payment only (again for the same one: a retry).
    public func decryptWalletToken(wallet: String, token: Data, paymentID: String? = nil) async throws -> Data {
        let offset = MemoryLayout<gw_host_api>.offset(of: \gw_host_api.wallet_decrypt)!
        guard Int(table.pointee.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size, let decrypt = table.pointee.wallet_decrypt else {
            throw AdapterError.unsupported("the host offers no wallet_decrypt (ABI 1.0 host)")
        }
        let parsed: JSONValue
        do { parsed = try JSONValue(jsonData: token) } catch {
            throw AdapterError.invalidRequest("the wallet token is not JSON (\(error))")
        }
        let document = WalletDecryptRequest(wallet: wallet, paymentID: paymentID, token: parsed).jsonBytes()
        return try await withCheckedThrowingContinuation { continuation in
            let box = Unmanaged.passRetained(WalletContinuation(continuation)).toOpaque()
            document.withUnsafeBytes { bytes in
                decrypt(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, walletCallbackThunk, box)
            }
        }
    }

    /// Completes `callID` (exactly once; the SDK guarantees it).
    func complete(_ callID: UInt64, status: Int32, document: [UInt8]) {
        document.withUnsafeBytes { bytes in
            table.pointee.complete?(callID, status, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }
}

/// An HTTP request as `http_send` takes it (`timeoutMilliseconds` is the
/// document's `timeout_ms`).
public typealias HTTPRequest = HTTPSendRequest

/// An HTTP response as `http_send` delivers it.
public typealias HTTPResponse = HTTPSendResponse

/// Why `send` produced no response.
public struct HTTPEgressError: Error, Sendable {
    /// The `gw_status` the host reported.
    public var status: Int32
    public var message: String
}

private final class HTTPContinuation: @unchecked Sendable {
    let continuation: CheckedContinuation<HTTPResponse, Error>
    init(_ continuation: CheckedContinuation<HTTPResponse, Error>) { self.continuation = continuation }
}

private let httpCallbackThunk: gw_http_callback = { userData, status, bytes, length in
    let box = Unmanaged<HTTPContinuation>.fromOpaque(userData!).takeRetainedValue()
    let data = bytes.map { Data(bytes: $0, count: length) } ?? Data()
    if status == GW_OK, let response = try? HTTPResponse(jsonData: data) {
        box.continuation.resume(returning: response)
    } else {
        let message = (try? ErrorDocument(jsonData: data))?.message ?? "egress failed"
        box.continuation.resume(throwing: HTTPEgressError(status: status == GW_OK ? GW_E_OUTCOME_UNKNOWN : status, message: message))
    }
}

/// Why the host did not decrypt a wallet token: its `gw_status` and the
/// refusal's code (`bad_signature`, `wrong_chain`, `no_merchant_keys`, ...).
public struct WalletTokenRefusal: Error, Sendable {
    public var status: Int32
    public var code: String
    public var message: String
}

private final class WalletContinuation: @unchecked Sendable {
    let continuation: CheckedContinuation<Data, Error>
    init(_ continuation: CheckedContinuation<Data, Error>) { self.continuation = continuation }
}

private let walletCallbackThunk: gw_http_callback = { userData, status, bytes, length in
    let box = Unmanaged<WalletContinuation>.fromOpaque(userData!).takeRetainedValue()
    let data = bytes.map { Data(bytes: $0, count: length) } ?? Data()
    if status == GW_OK {
        box.continuation.resume(returning: data)
    } else {
        let refusal = try? WalletRefusalDocument(jsonData: data)
        box.continuation.resume(throwing: WalletTokenRefusal(status: status, code: refusal?.code ?? "refused",
                                                             message: refusal?.message ?? "the host refused the token"))
    }
}
