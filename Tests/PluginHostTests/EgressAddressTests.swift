import Foundation
import Testing
@testable import PluginHost

/// Egress by address: an allowlisted name leads only to a public address, or
/// to one the allowlist names itself, both when the host resolves it before
/// connecting and when the connection's own resolution answers otherwise
/// (DNS rebinding). Names are played by an injected resolver: no DNS here.
@Suite struct EgressAddressTests {
    @Test(arguments: [
        ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
        ("172.31.255.255", "private"), ("192.168.1.1", "private"), ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"), ("100.64.0.1", "shared (carrier-grade NAT)"), ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"), ("255.255.255.255", "reserved"), ("::1", "loopback"), ("::", "unspecified"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"), ("64:ff9b::a9fe:a9fe", "cloud metadata"),
        ("fe80::1", "link-local"), ("fc00::1", "private (unique local)"), ("fd00:ec2::254", "cloud metadata"),
        ("ff02::1", "multicast"),
    ])
    func anAddressThatIsNotPublicIsNamedForWhatItIs(_ address: String, _ kind: String) {
        #expect(EgressAddress.kind(of: address) == kind)
    }

    @Test(arguments: ["8.8.8.8", "172.32.0.1", "100.128.0.1", "93.184.216.34", "2606:4700::1111", "2a00:1450:4001::200e"])
    func aPublicAddressIsPublic(_ address: String) {
        #expect(EgressAddress.kind(of: address) == nil)
    }

    /// What the allowlist names: an address entry, and localhost as both loopbacks; a name names nothing.
    @Test func onlyAddressEntriesAndLocalhostNameAnAddress() throws {
        let endpoints = [Manifest.Endpoint(host: "10.1.2.3", port: 8443), Manifest.Endpoint(host: "localhost", port: 8080),
                         Manifest.Endpoint(host: "api.example.com", port: 443), Manifest.Endpoint(host: "[::0001]", port: 9)]
        let named = EgressAddress.named(in: endpoints)
        #expect(named == ["10.1.2.3:8443", "127.0.0.1:8080", "::1:8080", "::1:9"])
        #expect(EgressAddress.refusal("10.1.2.3", port: 8443, named: named) == nil)
        #expect(EgressAddress.refusal("10.1.2.3", port: 443, named: named)?.contains("private") == true, "the port is part of what is named")
        #expect(EgressAddress.refusal("0:0::1", port: 9, named: named) == nil)
        #expect(EgressAddress.refusal("93.184.216.34", port: 443, named: []) == nil)
    }

    /// A hostile adapter's allowlist names a host that resolves to the
    /// host's loopback (or a metadata service): refused before connecting,
    /// nothing sent, the message naming the address and what would allow it.
    @Test(arguments: [("127.0.0.1", "loopback"), ("169.254.169.254", "cloud metadata"), ("10.0.0.7", "private")])
    func anAllowlistedNameThatResolvesToAnAddressNotPublicIsRefused(_ address: String, _ kind: String) async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "secret"))
        let client = AsyncHTTPEgressClient(resolve: { _ in [address] })
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["api.provider.test:\(server.port)"]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("POST", "https://api.provider.test:\(server.port)/pay", body: "{}")))
        #expect(outcome.status == .denied, "\(outcome)")
        #expect(outcome.message.contains("api.provider.test resolves to \(address) is a \(kind) address") && outcome.message.contains("nothing was sent"),
                "\(outcome.message)")
        #expect(server.requests.isEmpty)
        await context.closeEgress()
        await server.stop()
    }

    /// The name answered a public address when the host checked it, then
    /// the loopback when the connection resolved it (rebinding): the
    /// connection's peer is checked before any request is written.
    @Test func aNameThatAnswersOtherwiseWhenConnectingIsRefusedBeforeTheRequest() async throws {
        let server = try await EgressTestServer(.answer(status: 200, headers: [], body: "secret"))
        let client = AsyncHTTPEgressClient(resolve: { _ in ["93.184.216.34"] })
        let tls = EgressTLS()
        client.retain(tls)
        let request = EgressHTTPRequest(method: "GET", url: URL(string: "http://localhost:\(server.port)/metadata")!,
                                        endpoint: Manifest.Endpoint(host: "localhost", port: server.port), headers: [], body: Data(),
                                        timeout: .seconds(60))
        do {
            _ = try await client.send(request, tls: tls)
            Issue.record("the request reached the loopback")
        } catch {
            #expect(error.abiStatus == .denied, "\(error)")
            #expect(error.message.contains("the connection went to") && error.message.contains("loopback"), "\(error.message)")
        }
        #expect(server.requests.isEmpty)

        // Named by the allowlist (its pool knows it), the same connection goes.
        var named = EgressTLS()
        named.namedAddresses = EgressAddress.named(in: [Manifest.Endpoint(host: "localhost", port: server.port)])
        client.retain(named)
        let answered = try await client.send(request, tls: named)
        #expect(answered.status == 200)
        await client.release(tls)
        await client.release(named)
        await server.stop()
    }
}
