import Crypto
import Foundation
import NIOSSL
import X509

/// A throwaway PKI made in the test: a CA, a server certificate for
/// `localhost` and a client certificate, all P-256, valid for a day.
struct TLSTestCertificates {
    /// One certificate with its key, as PEM, and its key's SubjectPublicKeyInfo DER.
    struct Identity {
        var certificatePEM: String
        var keyPEM: String
        var spkiDER: Data

        /// The `sha256/<base64>` pin of this identity's key.
        var pin: String { "sha256/" + Data(SHA256.hash(data: spkiDER)).base64EncodedString() }
        var nioCertificate: NIOSSLCertificate { try! NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem) }
        var nioKey: NIOSSLPrivateKey { try! NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem) }
    }

    let ca: Identity
    let server: Identity
    let client: Identity

    init(caName: String = "Egress Test CA") throws {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caSubject = try DistinguishedName { CommonName(caName) }
        let caCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caSubject, subject: caSubject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        ca = Identity(certificatePEM: try caCertificate.serializeAsPEM().pemString, keyPEM: caKey.pemRepresentation,
                      spkiDER: caKey.publicKey.derRepresentation)

        func issue(_ name: String, usage: ExtendedKeyUsage.Usage, localhost: Bool) throws -> Identity {
            let key = P256.Signing.PrivateKey()
            let subject = try DistinguishedName { CommonName(name) }
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caSubject, subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([usage])
                    if localhost { SubjectAlternativeNames([.dnsName("localhost")]) }
                },
                issuerPrivateKey: .init(caKey))
            return Identity(certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: key.pemRepresentation,
                            spkiDER: key.publicKey.derRepresentation)
        }
        server = try issue("localhost", usage: .serverAuth, localhost: true)
        client = try issue("egress-test-client", usage: .clientAuth, localhost: false)
    }

    /// The server's TLS configuration; `requireClientCertificate` makes it demand one issued by the CA.
    func serverConfiguration(requireClientCertificate: Bool = false) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(server.nioCertificate)], privateKey: .privateKey(server.nioKey))
        if requireClientCertificate {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([ca.nioCertificate])
        }
        return configuration
    }
}
