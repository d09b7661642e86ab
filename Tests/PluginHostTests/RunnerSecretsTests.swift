import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing

/// What a runner is handed at LOAD to answer `secret_get` from its memory:
/// the manifest's secrets that have a value, never those only the host's own
/// services use (the `tls` keys, the wallet merchant keys).
@Suite struct RunnerSecretsTests {
    @Test func aRunnerIsGivenTheAdaptersSecretsButNotTheHostOnlyOnes() throws {
        let fixture = try EgressFixture()
        let manifest = try fixture.manifest(
            egress: ["api.allowed.example:443"],
            secrets: ["api_key": "k-123", "client_key": "not a pem key", "client_cert": "not a pem certificate",
                      "applepay_merchant_key": "apple key", "googlepay_recipient_id": "merchant:1", "empty": ""],
            tls: ["client_certificate": "client_cert", "client_key": "client_key"])
        let context = fixture.context(manifest, client: RecordingEgressClient())
        let held = context.runnerSecrets()
        #expect(held.keys.sorted() == ["api_key"], "\(held.keys.sorted())")
        #expect(held["api_key"] == Array("k-123".utf8))
        // What LOAD carries: base64 values, the same bytes.
        let load = RunnerLoad(expected: .init(manifest), library: "l", sourcePath: "s", sha256: "x", config: "{}",
                              limits: manifest.limits, secrets: held.mapValues { Data($0).base64EncodedString() })
        let decoded = try RunnerLoad(jsonData: Data(load.jsonBytes()))
        #expect(decoded.secrets.mapValues { Data(base64Encoded: $0).map(Array.init) } == ["api_key": Array("k-123".utf8)])
    }
}
