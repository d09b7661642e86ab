import Crypto
import Foundation
import GatewayPayloads

/// The outer JSON of a Google Pay `ECv2` token, read but not yet verified:
///
///     {"protocolVersion": "ECv2", "signature": base64 DER,
///      "intermediateSigningKey": {"signedKey": "<JSON text>", "signatures": [base64 DER, ...]},
///      "signedMessage": "<JSON text>"}
///
/// `signedKey` and `signedMessage` are kept as the exact strings the outer
/// JSON decodes to: the signatures cover their UTF-8 bytes, and Google's
/// serialiser writes them HTML-safe (`\u003d` for `=`), so re-serialising what
/// they parse to would change the bytes and break every signature.
struct GooglePayToken {
    static let protocolVersion = "ECv2"
    /// Who signs every token: the first part of every signed byte string.
    static let senderId = "Google"

    /// The intermediate key's description, signed by a root key.
    var signedKey: String
    /// Root signatures over ``signedKey``; one verifying under one trusted root is enough.
    var intermediateSignatures: [Data]
    /// The encrypted message's description, signed by the intermediate key.
    var signedMessage: String
    var signature: Data

    /// Refuses a token of another protocol version first (an `ECv1` token
    /// has another shape), then any member missing, of the wrong type or
    /// not documented, as Tink does.
    init(json data: Data) throws(WalletTokenError) {
        let token = try GooglePayJSONObject(parsing: data, named: "the token", at: "", in: .token)
        let version = try token.string("protocolVersion")
        guard version == Self.protocolVersion else { throw .unsupportedVersion(String(version.prefix(40))) }
        signature = try token.base64("signature")
        let intermediate = try token.object("intermediateSigningKey")
        signedKey = try intermediate.string("signedKey")
        let signatures = try intermediate.array("signatures")
        guard !signatures.isEmpty else { throw token.refusal("intermediateSigningKey.signatures is empty") }
        var ders: [Data] = []
        for (index, element) in signatures.enumerated() {
            let path = "intermediateSigningKey.signatures[\(index)]"
            guard case .string(let text) = element else { throw token.refusal("\(path) is not a string") }
            guard let der = Data(base64Encoded: text) else { throw token.refusal("\(path) is not base64") }
            ders.append(der)
        }
        intermediateSignatures = ders
        try intermediate.requireNoMembersBut(["signedKey", "signatures"])
        signedMessage = try token.string("signedMessage")
        try token.requireNoMembersBut(["protocolVersion", "signature", "intermediateSigningKey", "signedMessage"])
    }

    /// What a root key signs: `LV("Google") ‖ LV("ECv2") ‖ LV(signedKey)`.
    var intermediateSignedBytes: Data {
        Self.lengthValues([Self.senderId, Self.protocolVersion, signedKey])
    }

    /// What the intermediate key signs:
    /// `LV("Google") ‖ LV(recipientId) ‖ LV("ECv2") ‖ LV(signedMessage)`.
    func messageSignedBytes(recipientId: String) -> Data {
        Self.lengthValues([Self.senderId, recipientId, Self.protocolVersion, signedMessage])
    }

    /// Each part as the 4-byte little-endian length of its UTF-8 bytes, then those bytes.
    static func lengthValues(_ parts: [String]) -> Data {
        var bytes = Data()
        for part in parts {
            let utf8 = Array(part.utf8)
            let count = UInt64(utf8.count)
            bytes.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: count >> (8 * UInt64($0))) })
            bytes.append(contentsOf: utf8)
        }
        return bytes
    }
}

/// The intermediate signing key, read from `signedKey` once a root
/// signature over it has verified: `{"keyValue": base64 SubjectPublicKeyInfo,
/// "keyExpiration": "ms", ...}`. Other members are allowed, as Tink allows them.
struct GooglePayIntermediateKey {
    var key: P256.Signing.PublicKey
    var expiration: Date

    init(signedKey: String) throws(WalletTokenError) {
        let path = "intermediateSigningKey.signedKey"
        let object = try GooglePayJSONObject(parsing: Data(signedKey.utf8), named: path, at: path, in: .token)
        let der = try object.base64("keyValue")
        guard let key = try? P256.Signing.PublicKey(derRepresentation: der) else {
            throw object.refusal("\(object.name("keyValue")) is not a P-256 SubjectPublicKeyInfo")
        }
        self.key = key
        expiration = try object.milliseconds("keyExpiration")
    }
}

/// The encrypted message, read from `signedMessage` once the intermediate
/// key's signature over it has verified: exactly `encryptedMessage` (AES-CTR
/// ciphertext), `ephemeralPublicKey` (an uncompressed P-256 point) and `tag`
/// (HMAC-SHA256 of the ciphertext), each base64.
struct GooglePaySignedMessage {
    var encryptedMessage: Data
    var ephemeralPublicKey: Data
    var tag: Data

    init(signedMessage: String) throws(WalletTokenError) {
        let path = "signedMessage"
        let object = try GooglePayJSONObject(parsing: Data(signedMessage.utf8), named: path, at: path, in: .token)
        encryptedMessage = try object.base64("encryptedMessage")
        ephemeralPublicKey = try object.base64("ephemeralPublicKey")
        guard ephemeralPublicKey.count == 65, ephemeralPublicKey.first == 0x04 else {
            throw object.refusal("signedMessage.ephemeralPublicKey is not an uncompressed P-256 point (65 bytes from 04)")
        }
        tag = try object.base64("tag")
        guard tag.count == 32 else { throw object.refusal("signedMessage.tag is \(tag.count) bytes, not 32") }
        try object.requireNoMembersBut(["encryptedMessage", "ephemeralPublicKey", "tag"])
    }
}
