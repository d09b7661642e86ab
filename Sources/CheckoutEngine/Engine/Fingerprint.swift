import Crypto
import Foundation
import GatewayPayloads

/// What identifies a request for idempotency: its operation, its target and
/// its body (canonical JSON, keys sorted), under HMAC-SHA256 with a secret
/// key kept apart from the store. The body, which may carry an instrument, is
/// never stored, and its keyed hash cannot be searched for a card number by
/// someone who holds the database but not the key.
struct Fingerprinter: Sendable {
    let key: SymmetricKey

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func of(operation: String, target: String, body: some Encodable) throws -> String {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Data("\(operation)\n\(target)\n".utf8))
        mac.update(data: try Self.encoder.encode(body))
        return Hex.lowercase(mac.finalize())
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
