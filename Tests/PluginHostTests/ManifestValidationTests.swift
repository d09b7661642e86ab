import Foundation
@testable import PluginHost
import Testing
import TestSupport

@Suite struct ManifestValidationTests {
    @Test func shippedManifestsAreValid() throws {
        for url in try ManifestFile.list(in: BuildProducts.shippedManifests) {
            #expect(throws: Never.self, "\(url.lastPathComponent)") { try ManifestFile.read(url).get() }
        }
    }

    @Test func shippedManifestsPassTheCheckedInJSONSchemaKeys() throws {
        // The validator and the published schema must name the same members.
        let schemaURL = BuildProducts.shippedManifests.appendingPathComponent("schema/manifest-v1.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: schemaURL)) as? [String: Any])
        let properties = Set(try #require(schema["properties"] as? [String: Any]).keys)
        #expect(properties == ManifestValidator.knownKeys)
        let required = Set(try #require(schema["required"] as? [String]))
        #expect(required == ["file_format_version", "id", "version", "enabled", "library", "abi", "methods", "currencies", "countries", "operations"])
    }

    @Test func everyProblemIsReportedNotOnlyTheFirst() {
        let text = #"{"file_format_version": "2.0.0", "id": "x", "enabled": 1, "abi": {"major": 0}, "methods": ["visa", "visa"], "currencies": ["sar"], "countries": [], "operations": ["teleport"], "egress": ["nohost"]}"#
        guard case .invalid(let problems, let id) = ManifestValidator.validate(Data(text.utf8)) else {
            Issue.record()
            return
        }
        #expect(id == "x")
        let paths = problems.map(\.path)
        for expected in ["$.file_format_version", "$.version", "$.enabled", "$.library", "$.abi.major", "$.abi.minor",
                         "$.methods[1]", "$.currencies[0]", "$.countries", "$.operations[0]", "$.egress[0]"] {
            #expect(paths.contains(expected), "missing \(expected) in \(paths)")
        }
    }

    @Test func malformedJSONSaysWhere() {
        guard case .malformed(let detail) = ManifestValidator.validate(Data("{\n \"id\": \"x\",\n}x".utf8)) else {
            Issue.record()
            return
        }
        #expect(!detail.isEmpty)
    }
}

extension ManifestValidationTests {
    @Test func trailingCommasAreMalformedWithLineAndColumn() {
        let text = "{\n  \"id\": \"x\",\n  \"methods\": [\"visa\",],\n}"
        guard case .malformed(let detail) = ManifestValidator.validate(Data(text.utf8)) else {
            Issue.record("trailing commas must be refused")
            return
        }
        #expect(detail.contains("3:"), "\(detail)")
    }
}

/// The egress allowlist, as the host service applies it.
@Suite struct EgressPolicyTests {
    let policy = EgressPolicy([
        Manifest.Endpoint(host: "api.psp.example", port: 443), Manifest.Endpoint(host: "127.0.0.1", port: 8089),
        Manifest.Endpoint(host: "api.psp.example", port: 80),
    ])

    @Test func allowedHTTPSAndLoopbackHTTPPass() throws {
        #expect(try policy.check(URL(string: "https://API.psp.example/v1/pay")!).get() == Manifest.Endpoint(host: "api.psp.example", port: 443))
        #expect(throws: Never.self) { try policy.check(URL(string: "http://127.0.0.1:8089/sim")!).get() }
    }

    @Test func everythingElseIsDenied() {
        for url in ["https://api.psp.example:8443/", "https://evil.example/", "http://api.psp.example/", "ftp://api.psp.example/", "file:///etc/passwd"] {
            guard case .failure(let refusal) = policy.check(URL(string: url)!) else {
                Issue.record("\(url) must be denied")
                return
            }
            #expect(refusal.status == 9, "\(url)")
        }
    }
}
