import Crypto
import Foundation
import _CryptoExtras

/// The compact JWE of Worldline's client-side encryption
/// (`encryptedCustomerInput`): RSA-OAEP key wrapping with
/// A256CBC-HS512 content encryption, written from RFC 7516 and RFC 7518
/// §4.3 and §5.2 (Worldline's client SDKs do the same; none of their code
/// is used here):
///
///     base64url(header) . base64url(RSA-OAEP(content key)) . base64url(IV)
///       . base64url(AES-256-CBC ciphertext) . base64url(tag)
///
/// The header is `{"alg":"RSA-OAEP","enc":"A256CBC-HS512","kid":<key id>}`.
/// The 64-byte content key is a 32-byte HMAC key then a 32-byte AES key; the
/// tag is the first 32 bytes of HMAC-SHA-512 over AAD ‖ IV ‖ ciphertext ‖ AL,
/// where AAD is the ASCII of the encoded header and AL its length in bits
/// as a 64-bit big-endian integer. RSA-OAEP is SHA-1 with MGF1-SHA-1, which
/// is what `_RSA.Encryption.Padding.PKCS1_OAEP` means.
public enum WorldlineJWE {
    public enum Failure: Error, Equatable {
        /// A JWE was refused: one case, whatever went wrong, so that no
        /// answer tells a padding error from a bad tag.
        case undecryptable
        /// ``encrypt(_:publicKey:keyId:)`` was given no usable RSA public
        /// key, or ``cbcHmacSha512(encrypting:key:iv:aad:)`` a key or IV of
        /// the wrong size.
        case unusableKey
    }

    /// The plaintext of `compact`, encrypted to the sandbox key
    /// (``WorldlineSandboxKey``). In order: the header (JSON, with exactly
    /// this `alg`, `enc` and `kid`, and no `zip` or `crit`), the content key
    /// (RSA-OAEP; a key that does not unwrap to 64 bytes is replaced by a
    /// random one, so that it fails at the tag like any other forgery, RFC
    /// 7516 §11.5), the tag, compared in constant time before anything is
    /// decrypted, then AES-256-CBC. Any failure throws
    /// ``Failure/undecryptable``.
    public static func decrypt(_ compact: String) throws -> [UInt8] {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5,
              let headerBytes = base64URLDecoded(parts[0]),
              let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
              header["alg"] as? String == "RSA-OAEP", header["enc"] as? String == "A256CBC-HS512",
              header["kid"] as? String == WorldlineSandboxKey.keyID, header["zip"] == nil, header["crit"] == nil,
              let wrappedKey = base64URLDecoded(parts[1]),
              let iv = base64URLDecoded(parts[2]), iv.count == 16,
              let ciphertext = base64URLDecoded(parts[3]), !ciphertext.isEmpty, ciphertext.count % 16 == 0,
              let tag = base64URLDecoded(parts[4]), tag.count == 32 else {
            throw Failure.undecryptable
        }
        var contentKey = randomBytes(64)
        if let privateKey = try? _RSA.Encryption.PrivateKey(pemRepresentation: WorldlineSandboxKey.privateKeyPEM),
           let unwrapped = try? privateKey.decrypt(wrappedKey, padding: .PKCS1_OAEP), unwrapped.count == 64 {
            contentKey = Array(unwrapped)
        }
        let aad = Array(parts[0].utf8)
        let expected = authenticationTag(macKey: Array(contentKey[0..<32]), aad: aad, iv: iv, ciphertext: ciphertext)
        guard constantTimeEqual(expected, tag) else { throw Failure.undecryptable }
        do {
            let plaintext = try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: Array(contentKey[32..<64])),
                                                 iv: AES._CBC.IV(ivBytes: iv))
            return Array(plaintext)
        } catch {
            throw Failure.undecryptable
        }
    }

    /// `plaintext` as a compact JWE to the RSA key `publicKey` (base64 DER
    /// SubjectPublicKeyInfo, as `GET crypto/publickey` gives it), with
    /// `keyId` as the header's `kid`: what a payer's device does. A fresh
    /// random content key and IV each time.
    public static func encrypt(_ plaintext: [UInt8], publicKey: String, keyId: String) throws -> String {
        guard let der = Data(base64Encoded: publicKey),
              let rsa = try? _RSA.Encryption.PublicKey(derRepresentation: der) else { throw Failure.unusableKey }
        let header = SimulatorJSON.text(["alg": "RSA-OAEP", "enc": "A256CBC-HS512", "kid": keyId])
        let encodedHeader = base64URL(Array(header.utf8))
        let contentKey = randomBytes(64)
        let iv = randomBytes(16)
        let wrappedKey = try rsa.encrypt(contentKey, padding: .PKCS1_OAEP)
        let sealed = try cbcHmacSha512(encrypting: plaintext, key: contentKey, iv: iv, aad: Array(encodedHeader.utf8))
        return [encodedHeader, base64URL(Array(wrappedKey)), base64URL(iv), base64URL(sealed.ciphertext), base64URL(sealed.tag)]
            .joined(separator: ".")
    }

    /// AES_256_CBC_HMAC_SHA_512 (RFC 7518 §5.2.2.1): `key` is 64 bytes (the
    /// MAC key, then the encryption key), `iv` 16 bytes; the ciphertext is
    /// AES-256-CBC with PKCS#7 padding, the tag the first 32 bytes of
    /// HMAC-SHA-512 over `aad` ‖ `iv` ‖ ciphertext ‖ AL. Checked against the
    /// RFC's appendix B.3.
    public static func cbcHmacSha512(encrypting plaintext: [UInt8], key: [UInt8], iv: [UInt8],
                                     aad: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        guard key.count == 64, iv.count == 16 else { throw Failure.unusableKey }
        let ciphertext = Array(try AES._CBC.encrypt(plaintext, using: SymmetricKey(data: Array(key[32..<64])),
                                                    iv: AES._CBC.IV(ivBytes: iv)))
        return (ciphertext, authenticationTag(macKey: Array(key[0..<32]), aad: aad, iv: iv, ciphertext: ciphertext))
    }

    /// The first 32 bytes of HMAC-SHA-512(`macKey`, AAD ‖ IV ‖ ciphertext ‖ AL).
    static func authenticationTag(macKey: [UInt8], aad: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        let bits = UInt64(aad.count) * 8
        let al = (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        var hmac = HMAC<SHA512>(key: SymmetricKey(data: macKey))
        hmac.update(data: aad)
        hmac.update(data: iv)
        hmac.update(data: ciphertext)
        hmac.update(data: al)
        return Array(Array(hmac.finalize()).prefix(32))
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// `count` bytes from the system's secure random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }

    /// Base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url text without padding; nil for anything else
    /// (padding, `+`, `/`, other characters).
    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }),
              text.count % 4 != 1 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
