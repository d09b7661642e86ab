import Foundation
import Testing
@testable import PluginHost

/// The manifest's `tls` block, as the validator reads it.
@Suite("TLS manifest")
struct TLSManifestTests {
    static let pin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()

    func validate(_ tls: String, secrets: String = #"{"cert": "env:C", "key": "env:K", "ca": "file:ca.pem"}"#) -> ManifestValidator.Outcome {
        let text = """
        {"file_format_version": "1.0.0", "id": "stcpay", "version": "1.0.0", "enabled": true, "library": "libX.so",
         "abi": {"major": 1, "minor": 0}, "methods": ["stcpay"], "currencies": ["SAR"], "countries": ["SA"],
         "operations": ["authorize"], "secrets": \(secrets), "tls": \(tls)}
        """
        return ManifestValidator.validate(Data(text.utf8))
    }

    func problems(_ outcome: ManifestValidator.Outcome) -> [String] {
        guard case .invalid(let problems, _) = outcome else { return [] }
        return problems.map(\.description)
    }

    @Test func aFullTLSBlockIsRead() throws {
        let outcome = validate(#"{"client_certificate": "cert", "client_key": "key", "ca_certificate": "ca", "pins": ["\#(Self.pin)"]}"#)
        guard case .valid(let manifest) = outcome else { Issue.record("\(outcome)"); return }
        #expect(manifest.tls == Manifest.TLS(clientCertificate: "cert", clientKey: "key", caCertificate: "ca", pins: [Self.pin]))
    }

    @Test func anEmptyTLSBlockChangesNothing() throws {
        let outcome = validate("{}")
        guard case .valid(let manifest) = outcome else { Issue.record("\(outcome)"); return }
        #expect(manifest.tls == Manifest.TLS())
    }

    @Test func aNameMustBeADeclaredSecret() {
        let found = problems(validate(#"{"ca_certificate": "provider_ca"}"#))
        #expect(found.contains { $0.hasPrefix("$.tls.ca_certificate") && $0.contains(#"names secret "provider_ca", which $.secrets does not declare"#) }, "\(found)")
    }

    @Test func aPinMustBeSHA256OfThirtyTwoBytes() {
        let short = "sha256/" + Data(repeating: 1, count: 20).base64EncodedString()
        let found = problems(validate(#"{"pins": ["\#(short)", "md5/abc", "\#(Self.pin)"]}"#))
        #expect(found.contains { $0.hasPrefix("$.tls.pins[0]") && $0.contains("32-byte SHA-256") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("$.tls.pins[1]") }, "\(found)")
        #expect(!found.contains { $0.hasPrefix("$.tls.pins[2]") }, "\(found)")
    }

    @Test func aClientCertificateNeedsItsKey() {
        let found = problems(validate(#"{"client_certificate": "cert"}"#))
        #expect(found.contains { $0.hasPrefix("$.tls.client_key") && $0.contains("is required when client_certificate is given") }, "\(found)")
        let other = problems(validate(#"{"client_key": "key"}"#))
        #expect(other.contains { $0.hasPrefix("$.tls.client_certificate") && $0.contains("is required") }, "\(other)")
    }

    @Test func unknownMembersAreRefused() {
        let found = problems(validate(#"{"ciphers": "ALL"}"#))
        #expect(found.contains { $0.hasPrefix("$.tls.ciphers") && $0.contains("unknown member") }, "\(found)")
    }

    @Test func tlsMustBeAnObject() {
        let found = problems(validate(#""cert""#))
        #expect(found.contains { $0.hasPrefix("$.tls") && $0.contains("must be an object") }, "\(found)")
    }
}
