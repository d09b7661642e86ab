import Crypto
import Foundation
import GatewayPayloads
import SwiftASN1
import X509

/// A merchant's Apple Pay payment processing identity: its certificate
/// (from Apple, naming the merchant identifier) and the P-256 private key
/// tokens are encrypted for. Checked to belong together when read.
public struct ApplePayMerchant: Sendable {
    /// SHA-256 of the merchant identifier (the KDF's party V), from the
    /// certificate's extension 1.2.840.113635.100.6.32.
    public let merchantIdentifierHash: [UInt8]
    /// SHA-256 of the certificate's SubjectPublicKeyInfo: what a token's
    /// `publicKeyHash` says when it was encrypted for this key.
    public let publicKeyHash: [UInt8]
    let privateKey: P256.KeyAgreement.PrivateKey

    static let merchantIdentifierOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 32]

    /// - Parameters:
    ///   - certificatePEM: the payment processing certificate (PEM; text before its `BEGIN` line, such
    ///     as a PKCS #12 export's "Bag Attributes", is ignored).
    ///   - privateKeyPEM: its key, PKCS #8 or SEC 1 (PEM).
    public init(certificatePEM: String, privateKeyPEM: String) throws(WalletTokenError) {
        let certificate: Certificate
        do { certificate = try Certificate(pemEncoded: Self.firstPEMBlock(certificatePEM)) } catch {
            throw .merchantIdentity("the merchant certificate is not a PEM certificate")
        }
        do { privateKey = try P256.KeyAgreement.PrivateKey(pemRepresentation: Self.firstPEMBlock(privateKeyPEM)) } catch {
            throw .merchantIdentity("the merchant key is not a P-256 private key in PEM (PKCS #8 or SEC 1)")
        }
        guard let publicKey = P256.Signing.PublicKey(certificate.publicKey) else {
            throw .merchantIdentity("the merchant certificate's key is not a P-256 key")
        }
        guard publicKey.rawRepresentation == privateKey.publicKey.rawRepresentation else {
            throw .merchantIdentity("the merchant key is not the merchant certificate's key")
        }
        publicKeyHash = Array(SHA256.hash(data: publicKey.derRepresentation))
        guard let extensionValue = certificate.extensions[oid: Self.merchantIdentifierOID]?.value else {
            throw .merchantIdentity("the merchant certificate has no merchant identifier (extension 1.2.840.113635.100.6.32)")
        }
        // A DER UTF8String of the identifier's SHA-256 in 64 hex digits.
        guard let text = try? ASN1UTF8String(derEncoded: extensionValue), let hash = Hex.decode(String(text)), hash.count == 32 else {
            throw .merchantIdentity("the merchant identifier extension is not 64 hex digits")
        }
        merchantIdentifierHash = hash
    }

    static func firstPEMBlock(_ text: String) -> String {
        guard let begin = text.range(of: "-----BEGIN ") else { return text }
        return String(text[begin.lowerBound...])
    }
}
