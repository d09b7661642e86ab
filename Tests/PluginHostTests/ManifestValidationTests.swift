import Foundation
import XCTest
@testable import PluginHost

final class ManifestValidationTests: XCTestCase {
    func testShippedManifestsAreValid() throws {
        for url in try ManifestFile.list(in: BuildProducts.shippedManifests) {
            XCTAssertNoThrow(try ManifestFile.read(url).get(), url.lastPathComponent)
        }
    }

    func testShippedManifestsPassTheCheckedInJSONSchemaKeys() throws {
        // The validator and the published schema must name the same members.
        let schemaURL = BuildProducts.shippedManifests.appendingPathComponent("schema/manifest-v1.schema.json")
        let schema = try JSONSerialization.jsonObject(with: Data(contentsOf: schemaURL)) as! [String: Any]
        let properties = Set((schema["properties"] as! [String: Any]).keys)
        XCTAssertEqual(properties, ManifestValidator.knownKeys)
        let required = Set(schema["required"] as! [String])
        XCTAssertEqual(required, ["file_format_version", "id", "version", "enabled", "library", "abi", "methods", "currencies", "countries", "operations"])
    }

    func testEveryProblemIsReportedNotOnlyTheFirst() {
        let text = #"{"file_format_version": "2.0.0", "id": "x", "enabled": 1, "abi": {"major": 0}, "methods": ["visa", "visa"], "currencies": ["sar"], "countries": [], "operations": ["teleport"], "egress": ["nohost"]}"#
        guard case .invalid(let problems, let id) = ManifestValidator.validate(Data(text.utf8)) else { return XCTFail() }
        XCTAssertEqual(id, "x")
        let paths = problems.map(\.path)
        for expected in ["$.file_format_version", "$.version", "$.enabled", "$.library", "$.abi.major", "$.abi.minor",
                         "$.methods[1]", "$.currencies[0]", "$.countries", "$.operations[0]", "$.egress[0]"] {
            XCTAssertTrue(paths.contains(expected), "missing \(expected) in \(paths)")
        }
    }

    func testMalformedJSONSaysWhere() {
        guard case .malformed(let detail) = ManifestValidator.validate(Data("{\n \"id\": \"x\",\n}x".utf8)) else { return XCTFail() }
        XCTAssertFalse(detail.isEmpty)
    }
}

extension ManifestValidationTests {
    func testTrailingCommasAreMalformedWithLineAndColumn() {
        let text = "{\n  \"id\": \"x\",\n  \"methods\": [\"visa\",],\n}"
        guard case .malformed(let detail) = ManifestValidator.validate(Data(text.utf8)) else { return XCTFail("trailing commas must be refused") }
        XCTAssertTrue(detail.contains("3:"), detail)
    }
}

/// The egress allowlist, as the host service applies it.
final class EgressPolicyTests: XCTestCase {
    let policy = EgressPolicy([
        Manifest.Endpoint(host: "api.psp.example", port: 443), Manifest.Endpoint(host: "127.0.0.1", port: 8089),
        Manifest.Endpoint(host: "api.psp.example", port: 80),
    ])

    func testAllowedHTTPSAndLoopbackHTTPPass() throws {
        XCTAssertEqual(try policy.check(URL(string: "https://API.psp.example/v1/pay")!).get(), Manifest.Endpoint(host: "api.psp.example", port: 443))
        XCTAssertNoThrow(try policy.check(URL(string: "http://127.0.0.1:8089/sim")!).get())
    }

    func testEverythingElseIsDenied() {
        for url in ["https://api.psp.example:8443/", "https://evil.example/", "http://api.psp.example/", "ftp://api.psp.example/", "file:///etc/passwd"] {
            guard case .failure(let refusal) = policy.check(URL(string: url)!) else { return XCTFail("\(url) must be denied") }
            XCTAssertEqual(refusal.status, 9, url)
        }
    }
}
