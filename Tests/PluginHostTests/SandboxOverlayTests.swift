import Foundation
@testable import PluginHost
import Testing

/// Sandbox mode loads a provider manifest against the simulators without
/// changing the file: enabled, config from its `sandbox` block, egress to the
/// simulators only, sandbox credentials as private files.
@Suite struct SandboxOverlayTests {
    private func manifest(_ extra: String) throws -> Manifest {
        let json = """
            {"file_format_version": "1.0.0", "id": "hyperpay", "version": "1.0.0", "enabled": false,
             "library": "libHyperPayAdapter.so", "abi": {"major": 1, "minor": 0},
             "methods": ["mada"], "currencies": ["SAR"], "countries": ["SA"], "operations": ["authorize"],
             "config": {"base_url": "https://eu-prod.oppwa.com", "entity_id": "live-entity"},
             "secrets": {"access_token": "env:GATEWAY_HYPERPAY_ACCESS_TOKEN"},
             "egress": ["eu-prod.oppwa.com:443"]\(extra)}
            """
        guard case .valid(let manifest) = ManifestValidator.validate(Data(json.utf8)) else {
            // Skipped, not failed, as before the move to Swift Testing.
            try Test.cancel("manifest did not validate: \(ManifestValidator.validate(Data(json.utf8)))")
        }
        return manifest
    }

    @Test func aSandboxBlockRunsTheManifestAgainstTheSimulators() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let overlay = SandboxOverlay(baseURL: "http://127.0.0.1:49152",
                                     secrets: ["hyperpay": ["access_token": "sandbox-token-1"]], secretsDirectory: folder)
        let original = try manifest(#", "sandbox": {"config": {"base_url": "{sandbox}/hyperpay", "entity_id": "sandbox-entity"}}"#)
        let sandboxed = try overlay.apply(to: original)

        #expect(sandboxed.enabled)
        #expect(sandboxed.egress == [Manifest.Endpoint(host: "127.0.0.1", port: 49152)])
        let config = try JSONSerialization.jsonObject(with: Data(sandboxed.configJSON.utf8)) as? [String: String]
        #expect(config == ["base_url": "http://127.0.0.1:49152/hyperpay", "entity_id": "sandbox-entity"])
        guard case .file(let path)? = sandboxed.secrets["access_token"] else {
            Issue.record("the secret is not a file reference")
            return
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "sandbox-token-1")
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600, "a sandbox credential is readable by its owner only")
    }

    @Test func aManifestWithoutASandboxBlockIsLoadedAsItIs() throws {
        let overlay = SandboxOverlay(baseURL: "http://127.0.0.1:49152", secrets: [:], secretsDirectory: FileManager.default.temporaryDirectory)
        let original = try manifest("")
        #expect(try overlay.apply(to: original) == original)
    }

    @Test func aMalformedSandboxBlockIsRefusedWithItsPath() {
        let json = """
            {"file_format_version": "1.0.0", "id": "x", "version": "1.0.0", "enabled": false, "library": "libX.so",
             "abi": {"major": 1, "minor": 0}, "methods": ["mada"], "currencies": ["SAR"], "countries": ["SA"],
             "operations": ["authorize"], "sandbox": {"config": "http://x", "secrets": {}}}
            """
        guard case .invalid(let problems, _) = ManifestValidator.validate(Data(json.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(Set(problems.map(\.path)) == ["$.sandbox.config", "$.sandbox.secrets"])
    }
}
