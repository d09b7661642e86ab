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

    func of(operation: String, target: String, body: some Fingerprintable) -> String {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Data("\(operation)\n\(target)\n".utf8))
        var writer = JSONWriter()
        body.writeCanonical(to: &writer)
        mac.update(data: writer.bytes)
        return Hex.lowercase(mac.finalize())
    }
}

/// A request body with one canonical JSON form: members in a fixed order, nil
/// members omitted, maps with sorted keys. Equal requests write equal bytes.
protocol Fingerprintable {
    func writeCanonical(to w: inout JSONWriter)
}

extension NewSession: Fingerprintable {
    func writeCanonical(to w: inout JSONWriter) {
        w.beginObject()
        w.member("amount", amount)
        w.member("country", country)
        w.member("orderId", orderId)
        w.member("payer", payer)
        w.member("capture", capture?.rawValue)
        w.member("returnUrl", returnUrl)
        w.endObject()
    }
}

extension NewAttempt: Fingerprintable {
    func writeCanonical(to w: inout JSONWriter) {
        w.beginObject()
        w.member("method", method)
        w.member("provider", provider)
        if let instrument {
            w.key("instrument")
            w.value(.object(instrument))
        }
        w.endObject()
    }
}

extension PayerInput: Fingerprintable {
    func writeCanonical(to w: inout JSONWriter) {
        w.beginObject()
        w.member("otp", otp)
        w.member("returnParams", returnParams)
        w.endObject()
    }
}

/// A request with no body (abort).
struct EmptyBody: Fingerprintable {
    func writeCanonical(to w: inout JSONWriter) {
        w.beginObject()
        w.endObject()
    }
}
