import Crypto
import Foundation

/// What an instrument id seals: whose it is and the provider's reference.
struct SealedInstrument: Sendable, Equatable, Codable {
    var session: String
    var provider: String
    var method: String
    var kind: String
    var reference: String

    enum CodingKeys: String, CodingKey {
        case session = "s", provider = "p", method = "m", kind = "k", reference = "r"
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
        // Encoding five strings, and sealing with a fresh random nonce under a
        // 256-bit key, cannot fail.
        let plain = try! JSONEncoder().encode(value)
        let box = try! AES.GCM.seal(plain, using: key)
        return "ins_" + Self.base64url(box.combined!)
    }

    func open(_ id: String) -> SealedInstrument? {
        guard id.hasPrefix("ins_"), id.utf8.count <= 4096, let data = Self.data(base64url: String(id.dropFirst(4))),
              let box = try? AES.GCM.SealedBox(combined: data), let plain = try? AES.GCM.open(box, using: key)
        else { return nil }
        return try? JSONDecoder().decode(SealedInstrument.self, from: plain)
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
