import Crypto
import Foundation
import GatewayPayloads
import WalletTokens
import _CryptoExtras

/// Google Pay `ECv2` tokens made in Swift under test signing keys (a root,
/// an intermediate it signs, a merchant key pair), each part changeable so
/// that a test breaks exactly one thing. Written from Google's description
/// of the protocol, not from the module's decryptor (it uses the module's
/// public types only); the independent producer of the recorded fixture is
/// `scripts/googlepay-test-token`. Like Google's, the inner JSON strings are
/// written HTML-safe (`\u003d`), and `signedKey` carries a member the
/// decryptor does not know.
struct GooglePayTestTokens {
    /// 2026-12-01T00:00:00Z: "now" for every Swift-made token.
    static let now = Date(timeIntervalSince1970: 1_796_083_200)
    static let pan = "4111111111111111"
    static let day: TimeInterval = 86_400

    var rootKey = P256.Signing.PrivateKey()
    var rootVersion = "ECv2"
    var rootExpiration: Date? = GooglePayTestTokens.now + 365 * GooglePayTestTokens.day
    var intermediateKey = P256.Signing.PrivateKey()
    var keyExpiration = GooglePayTestTokens.now + 30 * GooglePayTestTokens.day
    var merchantKey = P256.KeyAgreement.PrivateKey()
    var recipientId = "merchant:12345678901234567890"
    var protocolVersion = "ECv2"
    /// Signs the intermediate key in place of the root key.
    var intermediateSigner: P256.Signing.PrivateKey?
    /// Signs the message in place of the intermediate key.
    var messageSigner: P256.Signing.PrivateKey?
    /// The decrypted message.
    var message = GooglePayTestTokens.paymentData()
    /// Flips a bit of the tag before the message is signed.
    var corruptTag = false
    /// Changes the members of `signedKey` before it is signed.
    var editSignedKey: ([(String, String)]) -> [(String, String)] = { $0 }
    /// Changes the members of `signedMessage` before it is signed.
    var editSignedMessage: ([(String, String)]) -> [(String, String)] = { $0 }

    /// Google's decrypted message for a `CRYPTOGRAM_3DS` card.
    static func paymentData(expiration: Date? = GooglePayTestTokens.now + 3600,
                            pan: JSONValue = .string(GooglePayTestTokens.pan)) -> JSONValue {
        var message: [String: JSONValue] = [
            "messageId": .string("AH2EjtestSwiftMadeMessage"),
            "paymentMethod": .string("CARD"),
            "paymentMethodDetails": .object([
                "pan": pan, "expirationMonth": .integer(12), "expirationYear": .integer(2030),
                "authMethod": .string("CRYPTOGRAM_3DS"), "cryptogram": .string("AgAAAAAABk4DWZ4C28yUQAAAAAA="),
                "eciIndicator": .string("05"),
            ]),
        ]
        if let expiration { message["messageExpiration"] = .string(milliseconds(expiration)) }
        return .object(message)
    }

    var rootKeys: [GooglePaySigningKey] {
        [GooglePaySigningKey(key: rootKey.publicKey, protocolVersion: rootVersion, expiration: rootExpiration)]
    }

    /// A decryptor that trusts this root, for this recipient, with this merchant key.
    var decryptor: GooglePayDecryptor {
        GooglePayDecryptor(rootKeys: rootKeys, recipientId: recipientId, merchantKeys: [merchantKey])
    }

    func tokenJSON() throws -> JSONValue {
        let signedKey = Self.htmlSafeObject(editSignedKey([
            ("keyValue", intermediateKey.publicKey.derRepresentation.base64EncodedString()),
            ("keyExpiration", Self.milliseconds(keyExpiration)),
            ("keyOrigin", "swift test generator"),
        ]))
        let keySignature = try (intermediateSigner ?? rootKey).signature(for: Self.lengthValues(["Google", "ECv2", signedKey]))
        let signedMessage = Self.htmlSafeObject(editSignedMessage(try seal(Data(message.jsonBytes()))))
        let signature = try (messageSigner ?? intermediateKey).signature(
            for: Self.lengthValues(["Google", recipientId, "ECv2", signedMessage]))
        return .object([
            "protocolVersion": .string(protocolVersion),
            "signature": .string(signature.derRepresentation.base64EncodedString()),
            "intermediateSigningKey": .object([
                "signedKey": .string(signedKey),
                "signatures": .array([.string(keySignature.derRepresentation.base64EncodedString())]),
            ]),
            "signedMessage": .string(signedMessage),
        ])
    }

    func token() throws -> Data { Data(try tokenJSON().jsonBytes()) }

    /// ECIES as Google describes it: ECDH with a fresh ephemeral key; HKDF-SHA256
    /// over (ephemeral point ‖ shared secret), no salt, info "Google", 64 bytes;
    /// AES-256-CTR with a zero IV under the first half; HMAC-SHA256 of the
    /// ciphertext under the second half as the tag.
    func seal(_ plaintext: Data) throws -> [(String, String)] {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let point = ephemeral.publicKey.x963Representation
        let shared = try ephemeral.sharedSecretFromKeyAgreement(with: merchantKey.publicKey)
        var inputKeyMaterial = point
        shared.withUnsafeBytes { inputKeyMaterial.append(contentsOf: $0) }
        let keys = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: inputKeyMaterial), info: Data("Google".utf8),
                                          outputByteCount: 64).withUnsafeBytes { Array($0) }
        let ciphertext = try AES._CTR.encrypt(plaintext, using: SymmetricKey(data: Array(keys[0..<32])),
                                              nonce: try AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)))
        var tag = Data(HMAC<SHA256>.authenticationCode(for: ciphertext, using: SymmetricKey(data: Array(keys[32..<64]))))
        if corruptTag { tag[tag.startIndex] ^= 0x01 }
        return [("encryptedMessage", ciphertext.base64EncodedString()), ("ephemeralPublicKey", point.base64EncodedString()),
                ("tag", tag.base64EncodedString())]
    }

    /// `{"name":"value",...}` as Gson writes it HTML-safe: `=` becomes `\u003d`.
    /// The values are base64 or digits, which need no other escape.
    static func htmlSafeObject(_ members: [(String, String)]) -> String {
        "{" + members.map { name, value in
            "\"\(name)\":\"\(value.replacingOccurrences(of: "=", with: "\\u003d"))\""
        }.joined(separator: ",") + "}"
    }

    static func lengthValues(_ parts: [String]) -> Data {
        var data = Data()
        for part in parts {
            withUnsafeBytes(of: UInt32(part.utf8.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: Array(part.utf8))
        }
        return data
    }

    static func milliseconds(_ date: Date) -> String { String(Int64((date.timeIntervalSince1970 * 1000).rounded())) }

    /// `value` with the member at `path` (dotted) replaced, or removed when `replacement` is nil.
    static func editing(_ value: JSONValue, _ path: String, to replacement: JSONValue?) -> JSONValue {
        let names = path.split(separator: ".", maxSplits: 1).map(String.init)
        guard case .object(var members) = value else { return value }
        if names.count == 1 {
            members[names[0]] = replacement
        } else {
            members[names[0]] = editing(members[names[0]] ?? .object([:]), names[1], to: replacement)
        }
        return .object(members)
    }
}
