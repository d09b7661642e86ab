import Crypto
import Foundation
import _CryptoExtras

/// Google's ECIES for `ECv2` messages, as Tink's payment method token
/// recipient does it:
///
/// 1. ECDH of the merchant key with the ephemeral key: the shared X coordinate;
/// 2. HKDF-SHA256 over (ephemeral point ‖ shared X), salt empty (32 zero
///    bytes), info `"Google"`, 64 bytes: the AES-256 key, then the HMAC key;
/// 3. HMAC-SHA256 of the ciphertext, compared with `tag` in constant time,
///    before anything is decrypted;
/// 4. AES-256-CTR with an all-zero 16-byte IV.
enum GooglePayECIES {
    static let info = Array("Google".utf8)
    static let salt = [UInt8](repeating: 0, count: 32)

    enum Outcome {
        case plaintext(Data)
        /// The tag does not verify under this merchant key.
        case wrongKey
    }

    static func open(_ message: GooglePaySignedMessage, with merchantKey: P256.KeyAgreement.PrivateKey) throws(WalletTokenError) -> Outcome {
        guard let ephemeral = try? P256.KeyAgreement.PublicKey(x963Representation: message.ephemeralPublicKey) else {
            throw .malformedToken("signedMessage.ephemeralPublicKey is not a point on P-256")
        }
        guard let shared = try? merchantKey.sharedSecretFromKeyAgreement(with: ephemeral) else { return .wrongKey }
        var inputKeyMaterial = message.ephemeralPublicKey
        shared.withUnsafeBytes { inputKeyMaterial.append(contentsOf: $0) }
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: inputKeyMaterial), salt: salt,
                                             info: info, outputByteCount: 64)
        let keyBytes = derived.withUnsafeBytes { Array($0) }
        let aesKey = SymmetricKey(data: Array(keyBytes.prefix(32)))
        let macKey = SymmetricKey(data: Array(keyBytes.dropFirst(32)))
        guard HMAC<SHA256>.isValidAuthenticationCode(message.tag, authenticating: message.encryptedMessage, using: macKey) else {
            return .wrongKey
        }
        do {
            let nonce = try AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16))
            return .plaintext(try AES._CTR.decrypt(message.encryptedMessage, using: aesKey, nonce: nonce))
        } catch {
            throw .decryptionFailed("AES-256-CTR refused the derived key")
        }
    }
}
