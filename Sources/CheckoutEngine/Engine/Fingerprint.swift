import Crypto
import Foundation
import GatewayPayloads

/// What identifies a request for idempotency: its operation, its target and
/// its body (canonical JSON, keys sorted), under HMAC-SHA256 with a secret
/// key kept apart from the store. The body, which may carry an instrument, is
/// never stored, and its keyed hash cannot be searched for a card number by
/// someone who holds the database but not the key.
struct Fingerprinter: Sendable {
    /// Keyed once; each fingerprint starts from a copy.
    private let keyed: HMAC<SHA256>

    init(key: SymmetricKey) {
        keyed = HMAC<SHA256>(key: key)
    }

    func of(operation: String, target: String, body: some Fingerprintable) -> String {
        var mac = keyed
        var writer = JSONWriter(capacity: 512)
        writer.string(operation)
        writer.string(target)
        body.writeCanonical(to: &writer)
        mac.update(data: writer.bytes)
        return mac.finalize().withUnsafeBytes { Hex.lowercase($0) }
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
        w.member("instrumentId", instrumentId)
        if let instrument {
            w.key("instrument")
            Self.writeCanonical(.object(instrument), to: &w)
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

extension NewAttempt {
    /// `value` as fingerprints have always written it: every number as a
    /// double (`5.0` and `5` alike as `5`), members sorted. A key stored by an
    /// earlier build must still match the same request (JSONWriter's own
    /// `value` keeps `5.0` apart from `5` since the tree keeps integers exact).
    static func writeCanonical(_ value: JSONValue, to w: inout JSONWriter) {
        switch value {
        case .integer(let i): w.double(Double(i))
        case .number(let n): w.double(n)
        case .array(let elements):
            w.beginArray()
            for element in elements { writeCanonical(element, to: &w) }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                w.key(key)
                writeCanonical(member, to: &w)
            }
            w.endObject()
        default: w.value(value)
        }
    }
}
