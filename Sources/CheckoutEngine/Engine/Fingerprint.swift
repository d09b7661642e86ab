import Crypto
import Foundation

/// What identifies a request for idempotency: its operation, its target and
/// its body (canonical JSON, keys sorted), hashed, so that the body itself,
/// which may carry an instrument, is never stored.
enum Fingerprint {
    static func of(operation: String, target: String, body: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var hasher = SHA256()
        hasher.update(data: Data("\(operation)\n\(target)\n".utf8))
        hasher.update(data: try encoder.encode(body))
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// Opaque ids: a prefix and 20 random base-32 characters (100 bits).
enum Identifiers {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    static func make(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](prefix.utf8)
        bytes.append(UInt8(ascii: "_"))
        for _ in 0..<20 { bytes.append(alphabet[Int(generator.next() % 32)]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
