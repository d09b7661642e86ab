import Crypto
import Foundation
import GatewayAdapterSDK

/// Verifies the JWT Tamara puts on its notifications (`Authorization: Bearer`
/// and `?tamaraToken=`): HS256 over `header.payload`, keyed with the
/// merchant's notification token. The header's `alg` must be `HS256` (`none`
/// and every other algorithm are refused, so the token cannot choose how it
/// is checked); the signature is compared in constant time; `exp`, when
/// present, must not have passed (60 seconds of clock skew allowed), and
/// `iss`, when present, must be `Tamara`.
enum TamaraJWT {
    static let leeway: TimeInterval = 60

    struct Failure: Error { var reason: String }

    /// What a verified token says: all of it signed.
    struct Verified: Sendable {
        /// The `order_id` claim, when the token carries the notification's order.
        var orderId: String?
        /// The `event_type` claim, when the token carries it.
        var eventType: String?
        /// Hex SHA-256 of the signed part (`header.payload`): the same for
        /// the same signed content, whatever travels beside it.
        var digest: String
    }

    static func verify(_ token: String, key: [UInt8], now: Date) throws(Failure) -> Verified {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Failure(reason: "the token is not a JWT (three base64url parts)") }
        guard let headerData = decode(parts[0]), let payloadData = decode(parts[1]), let signature = decode(parts[2]) else {
            throw Failure(reason: "the token's parts are not base64url")
        }
        guard let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any] else {
            throw Failure(reason: "the token's header is not a JSON object")
        }
        guard header["alg"] as? String == "HS256" else {
            throw Failure(reason: "the token's alg is \(String(describing: header["alg"] ?? "missing").prefix(16)), not HS256")
        }
        let expected = HMAC<SHA256>.authenticationCode(for: Data((parts[0] + "." + parts[1]).utf8), using: SymmetricKey(data: key))
        guard constantTimeEqual(Array(expected), Array(signature)) else {
            throw Failure(reason: "the token's signature does not match the notification token")
        }
        guard let claims = (try? JSONSerialization.jsonObject(with: payloadData)) as? [String: Any] else {
            throw Failure(reason: "the token's payload is not a JSON object")
        }
        if let exp = claims["exp"] {
            guard let seconds = (exp as? NSNumber)?.doubleValue else { throw Failure(reason: "the token's exp is not a number") }
            guard now.timeIntervalSince1970 <= seconds + leeway else { throw Failure(reason: "the token expired") }
        }
        if let issuer = claims["iss"], issuer as? String != "Tamara" {
            throw Failure(reason: "the token was not issued by Tamara")
        }
        func text(_ claim: String) throws(Failure) -> String? {
            guard let value = claims[claim] else { return nil }
            guard let text = value as? String else { throw Failure(reason: "the token's \(claim) is not a string") }
            return text
        }
        let digest = Hex.lowercase(SHA256.hash(data: Data((parts[0] + "." + parts[1]).utf8)))
        return Verified(orderId: try text("order_id"), eventType: try text("event_type"), digest: digest)
    }

    /// Equal length and bytes, in time that depends only on the length.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// base64url without padding, as JWTs use it.
    static func decode(_ part: Substring) -> Data? {
        guard part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
