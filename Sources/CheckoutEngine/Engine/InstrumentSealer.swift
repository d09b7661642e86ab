import Crypto
import Foundation
import GatewayPayloads

/// What an instrument id seals: whose it is and the provider's reference.
struct SealedInstrument: Sendable, Equatable {
    var session: String
    var provider: String
    var method: String
    var kind: String
    var reference: String
}

/// Sealed as `{"s":…,"p":…,"m":…,"k":…,"r":…}` (short names: an id is sent back and forth).
extension SealedInstrument: JSONPayload {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("s", session)
        w.member("p", provider)
        w.member("m", method)
        w.member("k", kind)
        w.member("r", reference)
        w.endObject()
    }

    init(parsing p: inout JSONParser) throws(JSONParseError) {
        var session: String?, provider: String?, method: String?, kind: String?, reference: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "s": session = try p.string()
            case "p": provider = try p.string()
            case "m": method = try p.string()
            case "k": kind = try p.string()
            case "r": reference = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(session: try required(session, "s", p), provider: try required(provider, "p", p), method: try required(method, "m", p),
                  kind: try required(kind, "k", p), reference: try required(reference, "r", p))
    }
}

/// Seals and opens instrument ids: `ins_` + base64url(AES-GCM(nonce ‖
/// ciphertext ‖ tag)) under a key derived (HKDF-SHA256, info
/// `gateway.instrument-id.v1`) from the fingerprint key, which is kept apart
/// from the store. An id that does not open is not an instrument.
struct InstrumentSealer: Sendable {
    private let key: SymmetricKey

    init(fingerprintKey: Data) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: fingerprintKey),
                                     info: Data("gateway.instrument-id.v1".utf8), outputByteCount: 32)
    }

    func seal(_ value: SealedInstrument) -> String {
        // Sealing with a fresh random nonce under a 256-bit key cannot fail.
        let plain = Data(value.jsonBytes())
        let box = try! AES.GCM.seal(plain, using: key)
        return "ins_" + Self.base64url(box.combined!)
    }

    func open(_ id: String) -> SealedInstrument? {
        guard id.hasPrefix("ins_"), id.utf8.count <= 4096, let data = Self.data(base64url: String(id.dropFirst(4))),
              let box = try? AES.GCM.SealedBox(combined: data), let plain = try? AES.GCM.open(box, using: key)
        else { return nil }
        return try? SealedInstrument(jsonData: plain)
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64url text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
