import Foundation
import Testing
@testable import PluginHost

/// https egress with the manifest's `tls` block: a private CA, mutual TLS with
/// a client certificate from secrets, and certificate pinning, against a NIOSSL
/// loopback server whose certificates the test makes.
@Suite("TLS egress")
struct TLSEgressTests {
    let certificates: TLSTestCertificates
    init() throws { certificates = try TLSTestCertificates() }

    /// Sends one GET to `server` from an adapter with `secrets` and `tls`.
    func send(to server: EgressTestServer, secrets: [String: String], tls: [String: Any]?,
              fixture: EgressFixture = try! EgressFixture()) async throws -> (EgressOutcome, HostContext) {
        let manifest = try fixture.manifest(egress: ["localhost:\(server.port)"], secrets: secrets, tls: tls)
        let context = fixture.context(manifest, client: AsyncHTTPEgressClient())
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("GET", "https://localhost:\(server.port)/status")))
        await context.closeEgress()
        return (outcome, context)
    }

    @Test func aServerIssuedByTheCAInCaCertificateIsTrusted() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "secure"), tls: certificates.serverConfiguration())
        let (outcome, _) = try await send(to: server, secrets: ["provider_ca": certificates.ca.certificatePEM], tls: ["ca_certificate": "provider_ca"])
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.body == "secure")
        await server.stop()
    }

    @Test func withoutTheCATheServerIsNotTrustedAndNothingIsSent() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "secure"), tls: certificates.serverConfiguration())
        let (outcome, _) = try await send(to: server, secrets: [:], tls: nil)
        #expect(outcome.status == .unreachable, "\(outcome.message)")
        #expect(server.requests.isEmpty)
        await server.stop()
    }

    @Test func mutualTLSSucceedsWithTheClientCertificateFromSecrets() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "hello client"),
                                                tls: certificates.serverConfiguration(requireClientCertificate: true))
        let (outcome, _) = try await send(
            to: server,
            secrets: ["ca": certificates.ca.certificatePEM, "client_cert": certificates.client.certificatePEM, "client_key": certificates.client.keyPEM],
            tls: ["ca_certificate": "ca", "client_certificate": "client_cert", "client_key": "client_key"])
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.body == "hello client")
        #expect(server.requests.count == 1)
        await server.stop()
    }

    @Test func mutualTLSFailsWithoutAClientCertificate() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "hello client"),
                                                tls: certificates.serverConfiguration(requireClientCertificate: true))
        let (outcome, _) = try await send(to: server, secrets: ["ca": certificates.ca.certificatePEM], tls: ["ca_certificate": "ca"])
        #expect(outcome.status == .unreachable, "\(outcome.status): \(outcome.message)")
        #expect(outcome.message.contains("refused this adapter's client certificate"))
        #expect(server.requests.isEmpty, "the server never accepted a request")
        await server.stop()
    }

    @Test func aMatchingPinPasses() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "pinned"), tls: certificates.serverConfiguration())
        let (outcome, _) = try await send(to: server, secrets: ["ca": certificates.ca.certificatePEM],
                                          tls: ["ca_certificate": "ca", "pins": [certificates.server.pin]])
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.body == "pinned")
        await server.stop()
    }

    @Test func aPinThatDoesNotMatchIsRefusedAndLogged() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "pinned"), tls: certificates.serverConfiguration())
        let fixture = try EgressFixture()
        let (outcome, _) = try await send(to: server, secrets: ["ca": certificates.ca.certificatePEM],
                                          tls: ["ca_certificate": "ca", "pins": [certificates.client.pin]], fixture: fixture)
        #expect(outcome.status == .denied, "\(outcome.message)")
        #expect(outcome.message.contains(certificates.server.pin), "names the key the server presented")
        #expect(outcome.message.contains("tls.pins"))
        #expect(server.requests.isEmpty, "nothing was sent")
        #expect(fixture.logs.lines.contains { $0.level == .warning && $0.text.contains("tls.pins") }, "\(fixture.logs.text)")
        await server.stop()
    }

    @Test func aSecretThatIsNotPEMRefusesTheAdapterNamingTheSecretNotItsValue() async throws {
        let fixture = try EgressFixture()
        let manifest = try fixture.manifest(
            egress: ["localhost:443"],
            secrets: ["client_cert": "garbage-value-7f3a", "client_key": certificates.client.keyPEM],
            tls: ["client_certificate": "client_cert", "client_key": "client_key"])
        let fake = RecordingEgressClient()
        let context = fixture.context(manifest, client: fake)
        let problem = try #require(context.egressSetupProblem)
        #expect(problem.message == #"tls.client_certificate: secret "client_cert" is not a PEM certificate"#)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("GET", "https://localhost/")))
        #expect(outcome.status == .denied)
        #expect(fake.sent.isEmpty)
        #expect(!fixture.logs.text.contains("garbage-value-7f3a"))
        #expect(!fixture.logs.text.contains("PRIVATE KEY"))
    }

    @Test func aKeyThatIsNotTheCertificatesRefusesTheAdapter() async throws {
        let fixture = try EgressFixture()
        let manifest = try fixture.manifest(
            egress: ["localhost:443"],
            secrets: ["client_cert": certificates.client.certificatePEM, "client_key": certificates.server.keyPEM],
            tls: ["client_certificate": "client_cert", "client_key": "client_key"])
        let context = fixture.context(manifest, client: RecordingEgressClient())
        let problem = try #require(context.egressSetupProblem)
        #expect(problem.message.contains(#"secret "client_key" is not the private key of the certificate in secret "client_cert""#), "\(problem)")
    }

    @Test func aMissingSecretValueRefusesTheAdapter() async throws {
        let fixture = try EgressFixture()
        var manifest = try fixture.manifest(egress: ["localhost:443"], secrets: ["ca": "x"], tls: ["ca_certificate": "ca"])
        manifest.secrets["ca"] = .file("does-not-exist.pem")
        let context = fixture.context(manifest, client: RecordingEgressClient())
        #expect(context.egressSetupProblem?.message == #"tls.ca_certificate: secret "ca" has no value"#)
    }
}
