import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Checks and opens Apple Pay `EC_v1` tokens, in Apple's order ("Payment
/// token format reference"):
///
/// 1. **Signature**: the detached CMS's signer info is ECDSA with SHA-256
///    over signed attributes whose message digest is the SHA-256 of
///    ephemeral key ‖ data ‖ transaction id ‖ application data
///    (``WalletTokenError/tamperedData(_:)`` when it is not,
///    ``WalletTokenError/badSignature(_:)`` when the signature does not verify
///    under the signer's key).
/// 2. **Chain**: the signer carries Apple's leaf marker (1.2.840.113635.100.6.29),
///    its issuer the intermediate marker (1.2.840.113635.100.6.2.14), and the
///    chain ends at a trusted root, Apple Root CA - G3 unless told otherwise,
///    each certificate valid at the signing time (``WalletTokenError/wrongChain(_:)``).
/// 3. **Signing time** within ``signingTimeWindow`` of `now` (Apple: five
///    minutes), where `now` may be given to replay a recorded token.
/// 4. **Merchant key**: the token's `publicKeyHash` is the merchant
///    certificate's (``WalletTokenError/wrongMerchantKey(_:)``).
/// 5. **Key**: ECDH of the merchant key and the ephemeral key, then the NIST
///    single-step KDF: SHA-256(00000001 ‖ Z ‖ 0x0D "id-aes256-GCM" ‖ "Apple" ‖
///    SHA-256(merchant identifier)).
/// 6. **Decryption**: AES-256-GCM, a 16-byte zero IV, the tag the last 16 bytes.
public struct ApplePayDecryptor: Sendable {
    public var trustRoots: [Certificate]
    /// How far the signing time may lie from "now", either way.
    public var signingTimeWindow: TimeInterval

    public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 29]
    public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 14]

    public init(trustRoots: [Certificate] = [AppleRootCA.g3], signingTimeWindow: TimeInterval = 5 * 60) {
        self.trustRoots = trustRoots
        self.signingTimeWindow = signingTimeWindow
    }

    public func decrypt(_ token: ApplePayToken, for merchant: ApplePayMerchant, now: Date) async throws(WalletTokenError) -> ApplePayPaymentData {
        let signature = try DetachedSignature(token.signature)
        try Self.verify(signature, over: token.signedContent)
        let signedAt = try await verifyChain(of: signature)
        guard abs(now.timeIntervalSince(signedAt)) <= signingTimeWindow else {
            throw .signingTimeOutsideWindow(signedAt: signedAt, now: now, window: signingTimeWindow)
        }
        guard token.publicKeyHash == merchant.publicKeyHash else {
            throw .wrongMerchantKey("the token was encrypted for another merchant certificate (publicKeyHash differs)")
        }
        let plaintext = try Self.open(token, with: merchant)
        return try ApplePayPaymentData(json: plaintext)
    }

    /// Step 1: the content's digest is the signed one, and the signer's key signed the attributes.
    static func verify(_ signature: DetachedSignature, over content: [UInt8]) throws(WalletTokenError) {
        guard Array(SHA256.hash(data: content)) == signature.messageDigest else {
            throw .tamperedData("the signed message digest is not the SHA-256 of ephemeral key, data, transaction id and application data")
        }
        guard signature.signer.publicKey.isValidSignature(signature.signatureBytes, for: signature.signedAttributes,
                                                          signatureAlgorithm: .ecdsaWithSHA256) else {
            throw .badSignature("the signed attributes do not verify under the signer certificate's key")
        }
    }

    /// Steps 2: the markers and the chain, at the signing time, which it answers.
    func verifyChain(of signature: DetachedSignature) async throws(WalletTokenError) -> Date {
        guard let signedAt = signature.signingTime else { throw .malformedToken("the signature has no signing time") }
        guard signature.signer.extensions[oid: Self.leafMarker] != nil else {
            throw .wrongChain("the signer certificate lacks Apple Pay's leaf marker (1.2.840.113635.100.6.29)")
        }
        let others = signature.certificates.filter { $0 != signature.signer }
        guard let intermediate = others.first(where: { $0.subject == signature.signer.issuer }) else {
            throw .wrongChain("the signature does not carry the signer's issuer")
        }
        guard intermediate.extensions[oid: Self.intermediateMarker] != nil else {
            throw .wrongChain("the intermediate certificate lacks Apple Pay's marker (1.2.840.113635.100.6.2.14)")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(trustRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: signedAt)
            ApplePayChainPolicy()
        }
        switch await verifier.validate(leaf: signature.signer, intermediates: CertificateStore(others)) {
        case .validCertificate: return signedAt
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }.joined(separator: "; ")
            throw .wrongChain("the signer does not chain to a trusted root at the signing time: \(reasons.isEmpty ? "no path from the signer to a trusted root" : String(reasons.prefix(300)))")
        }
    }

    /// Steps 5 and 6.
    static func open(_ token: ApplePayToken, with merchant: ApplePayMerchant) throws(WalletTokenError) -> [UInt8] {
        let ephemeral: P256.KeyAgreement.PublicKey
        do { ephemeral = try P256.KeyAgreement.PublicKey(derRepresentation: token.ephemeralPublicKey) } catch {
            throw .malformedToken("header.ephemeralPublicKey is not a P-256 public key")
        }
        let shared: SharedSecret
        do { shared = try merchant.privateKey.sharedSecretFromKeyAgreement(with: ephemeral) } catch {
            throw .decryptionFailed("no shared secret with the ephemeral key")
        }
        var hash = SHA256()
        hash.update(data: [0, 0, 0, 1])
        shared.withUnsafeBytes { hash.update(bufferPointer: $0) }
        hash.update(data: [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8) + merchant.merchantIdentifierHash)
        let key = SymmetricKey(data: hash.finalize())
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 16)),
                                            ciphertext: token.data.dropLast(16), tag: token.data.suffix(16))
            return Array(try AES.GCM.open(box, using: key))
        } catch {
            throw .decryptionFailed("AES-256-GCM refused the data (its tag does not match the derived key)")
        }
    }
}

/// Apple's chain shape: the leaf with its marker, issued by an intermediate
/// with its marker, issued by the root.
struct ApplePayChainPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else { return .failsToMeetPolicy(reason: "an Apple Pay chain is leaf, intermediate, root; this one has \(chain.count)") }
        guard chain[0].extensions[oid: ApplePayDecryptor.leafMarker] != nil,
              chain[1].extensions[oid: ApplePayDecryptor.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the chain's certificates lack Apple Pay's markers")
        }
        return .meetsPolicy
    }
}
