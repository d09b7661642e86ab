import Crypto
import Foundation

/// Signs test webhooks the way the mock gateway verifies them.
enum HMACTestVector {
    static func sha256Hex(key: [UInt8], message: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return mac.map { String(format: "%02x", $0) }.joined()
    }
}
