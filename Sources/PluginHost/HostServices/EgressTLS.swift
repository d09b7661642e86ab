import Foundation
import NIOSSL

/// The TLS settings of one adapter instance's https egress, resolved from its
/// manifest's `tls` block and secrets when the instance is created. Equal
/// settings share one connection pool. Its description never shows key material.
public struct EgressTLS: Sendable, Hashable, CustomStringConvertible {
    /// System roots, no client certificate, no pinning.
    public static let standard = EgressTLS()

    /// PEM of the client certificate chain (mutual TLS); with ``clientKeyPEM``.
    public var clientCertificatePEM: [UInt8]?
    public var clientKeyPEM: [UInt8]?
    /// PEM of the CA certificate(s) trusted instead of the system roots.
    public var caCertificatePEM: [UInt8]?
    /// SHA-256 digests of acceptable server leaf SubjectPublicKeyInfo DER; empty: no pinning.
    public var pins: Set<[UInt8]>
    /// The addresses that are not public which the allowlist names, as
    /// `address:port` (``EgressAddress/named(in:)``): nothing else that is
    /// not public is connected to. Part of the pool's key, as the TLS
    /// settings are: each connection is checked against its pool's.
    public var namedAddresses: Set<String> = []

    public init(clientCertificatePEM: [UInt8]? = nil, clientKeyPEM: [UInt8]? = nil, caCertificatePEM: [UInt8]? = nil,
                pins: Set<[UInt8]> = []) {
        self.clientCertificatePEM = clientCertificatePEM
        self.clientKeyPEM = clientKeyPEM
        self.caCertificatePEM = caCertificatePEM
        self.pins = pins
    }

    public var description: String {
        var parts: [String] = []
        if clientCertificatePEM != nil { parts.append("client certificate") }
        parts.append(caCertificatePEM != nil ? "own CA" : "system roots")
        if !pins.isEmpty { parts.append("\(pins.count) pin(s)") }
        return "TLS(\(parts.joined(separator: ", ")))"
    }

    /// NIOSSL's client configuration for these settings (TLS 1.2 or later,
    /// full certificate and host name verification).
    func makeConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        if let ca = caCertificatePEM {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(ca))
        }
        if let chain = clientCertificatePEM, let key = clientKeyPEM {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMBytes(chain).map { .certificate($0) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: key, format: .pem))
        }
        return configuration
    }
}

/// Why an adapter's `tls` settings cannot be used; names the secret, never its value.
public struct EgressSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

extension EgressTLS {
    /// Reads and checks the PEM secrets `tls` names. Throws when a secret has
    /// no value, is not PEM of the right kind, or the key does not fit the certificate.
    static func load(_ tls: Manifest.TLS?, secrets: SecretResolver) throws(EgressSetupError) -> EgressTLS {
        guard let tls else { return .standard }
        func read(_ member: String, _ name: String?) throws(EgressSetupError) -> [UInt8]? {
            guard let name else { return nil }
            guard let value = secrets.value(of: name) else {
                throw EgressSetupError(message: "tls.\(member): secret \"\(name)\" has no value")
            }
            return value
        }
        var settings = EgressTLS()
        settings.clientCertificatePEM = try read("client_certificate", tls.clientCertificate)
        settings.clientKeyPEM = try read("client_key", tls.clientKey)
        settings.caCertificatePEM = try read("ca_certificate", tls.caCertificate)
        settings.pins = Set(tls.pins.compactMap(Manifest.TLS.pinDigest))

        for (member, name, pem) in [("client_certificate", tls.clientCertificate, settings.clientCertificatePEM),
                                    ("ca_certificate", tls.caCertificate, settings.caCertificatePEM)] {
            guard let pem, let name else { continue }
            let certificates = try? NIOSSLCertificate.fromPEMBytes(pem)
            if certificates?.isEmpty ?? true {
                throw EgressSetupError(message: "tls.\(member): secret \"\(name)\" is not a PEM certificate")
            }
        }
        if let key = settings.clientKeyPEM, let name = tls.clientKey, (try? NIOSSLPrivateKey(bytes: key, format: .pem)) == nil {
            throw EgressSetupError(message: "tls.client_key: secret \"\(name)\" is not a PEM private key")
        }
        // A context refuses a key that does not belong to the certificate.
        do {
            _ = try NIOSSLContext(configuration: try settings.makeConfiguration())
        } catch {
            if let key = tls.clientKey, let certificate = tls.clientCertificate {
                throw EgressSetupError(message: "tls.client_key: secret \"\(key)\" is not the private key of the certificate in secret \"\(certificate)\"")
            }
            throw EgressSetupError(message: "tls: the settings cannot be used (\(error))")
        }
        return settings
    }
}
