import Foundation
import XCTest
@testable import PluginHost

/// The `gateway` executable, run as an operator or a plugin author would.
final class CLITests: XCTestCase {
    struct Row: Decodable {
        var id: String?
        var version: String?
        var enabled: Bool?
        var state: String
        var reason: String?
        var reasonKind: String?
        var methods: [String]
    }

    func gateway(_ arguments: [String], folder: ManifestFolder) throws -> ProcessResult {
        try runProcess(BuildProducts.gateway.path, arguments + ["--data", folder.root.appendingPathComponent("data").path])
    }

    func providers(_ folder: ManifestFolder) throws -> [Row] {
        let result = try gateway(["providers", "--json", "--manifests", folder.manifests.path], folder: folder)
        XCTAssertEqual(result.status, 0, result.output)
        return try JSONDecoder().decode([Row].self, from: Data(result.stdout.utf8))
    }

    func testProvidersListsTheShippedAdaptersAsLoaded() throws {
        let rows = try providers(try ManifestFolder())
        XCTAssertEqual(rows.map(\.id), ["example-c", "mock"])
        XCTAssertTrue(rows.allSatisfy { $0.state == "loaded" && $0.reason == nil })
        XCTAssertEqual(rows.first { $0.id == "mock" }?.methods.count, 11)
    }

    func testServeRefusesSecondsOutOfRangeNamingTheOption() throws {
        let folder = try ManifestFolder()
        for (option, range, values) in [("applepay-signing-window", "0 to 604800", ["-1", "604801"]), ("shutdown-timeout", "1 to 3600", ["0", "3601"])] {
            for value in values {
                let result = try gateway(["serve", "--manifests", folder.manifests.path, "--port", "0", "--\(option)=\(value)"], folder: folder)
                XCTAssertNotEqual(result.status, 0, result.output)
                XCTAssertTrue(result.output.contains("--\(option) must be \(range) seconds (got \(value))"), result.output)
            }
        }
    }

    func testWrongDigestRefusesMockWhileExampleCStaysLoaded() throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": String(repeating: "ab", count: 32)])
        let rows = try providers(folder)
        let mock = try XCTUnwrap(rows.first { $0.id == "mock" })
        XCTAssertEqual(mock.state, "refused")
        XCTAssertEqual(mock.reasonKind, "digest_mismatch")
        XCTAssertTrue(mock.reason?.contains("sha256 digest mismatch") == true, mock.reason ?? "")
        XCTAssertEqual(rows.first { $0.id == "example-c" }?.state, "loaded")
    }

    func testDisableAndEnableFlipOnlyThatMemberAtomically() throws {
        let folder = try ManifestFolder()
        let url = folder.manifests.appendingPathComponent("mock.json")
        let original = try String(contentsOf: url, encoding: .utf8)

        let disabled = try gateway(["providers", "disable", "mock", "--manifests", folder.manifests.path], folder: folder)
        XCTAssertEqual(disabled.status, 0, disabled.output)
        let edited = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(edited, original.replacingOccurrences(of: "\"enabled\": true", with: "\"enabled\": false"))
        XCTAssertEqual(try providers(folder).first { $0.id == "mock" }?.state, "disabled")
        // No temporary file is left behind.
        XCTAssertEqual(try ManifestFile.list(in: folder.manifests).map(\.lastPathComponent), ["example-c.json", "mock.json"])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: folder.manifests.path).allSatisfy { !$0.hasSuffix(".tmp") })

        let enabled = try gateway(["providers", "enable", "mock", "--manifests", folder.manifests.path], folder: folder)
        XCTAssertEqual(enabled.status, 0, enabled.output)
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), original)
    }

    func testEnablingAnUnknownProviderFailsClearly() throws {
        let folder = try ManifestFolder()
        let result = try gateway(["providers", "enable", "nope", "--manifests", folder.manifests.path], folder: folder)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.output.contains("no valid manifest with id \"nope\""), result.output)
    }

    func testPinWritesTheLibraryDigestAndTheManifestStillLoads() throws {
        let folder = try ManifestFolder()
        let result = try gateway(["providers", "pin", "example-c", "--manifests", folder.manifests.path], folder: folder)
        XCTAssertEqual(result.status, 0, result.output)
        let manifest = try ManifestFile.read(folder.manifests.appendingPathComponent("example-c.json")).get()
        XCTAssertEqual(manifest.sha256, LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.exampleCLibrary)))
        XCTAssertEqual(try providers(folder).first { $0.id == "example-c" }?.state, "loaded")
    }

    func testPluginCheckPassesForBothShippedAdapters() throws {
        let folder = try ManifestFolder()
        for name in ["mock.json", "example-c.json"] {
            let result = try gateway(["plugin", "check", folder.manifests.appendingPathComponent(name).path, "--timeout", "120"], folder: folder)
            XCTAssertEqual(result.status, 0, result.output)
            XCTAssertTrue(result.output.contains("checks passed"), result.output)
            XCTAssertFalse(result.output.contains("FAIL"), result.output)
        }
    }

    func testPluginCheckFailsOnAnAdapterThatCompletesTwice() async throws {
        let folder = try ManifestFolder()
        let manifest = try await FabricatedAdapter(id: "twice", completions: 2).install(in: folder, manifestName: "twice.json")
        let result = try gateway(["plugin", "check", manifest.path, "--json", "--timeout", "120"], folder: folder)
        XCTAssertNotEqual(result.status, 0)
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        XCTAssertTrue(result.stderr.contains("second completion"), result.stderr)
        XCTAssertFalse(report.passed)
        XCTAssertEqual(report.steps.first { $0.name == "exactly-once" }?.passed, false)
    }

    /// An adapter that answers every authorize afresh (it ignores the key)
    /// fails the idempotency check, which says what it did.
    func testPluginCheckFailsOnAnAdapterThatIgnoresIdempotency() async throws {
        let folder = try ManifestFolder()
        let manifest = try await FabricatedAdapter(id: "noidem").install(in: folder, manifestName: "noidem.json")
        let result = try gateway(["plugin", "check", manifest.path, "--json", "--timeout", "120"], folder: folder)
        XCTAssertNotEqual(result.status, 0)
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let step = try XCTUnwrap(report.steps.first { $0.name == "idempotency" }, result.stdout)
        XCTAssertFalse(step.passed)
        XCTAssertTrue(step.detail.contains("the same request under the same key was answered differently"), step.detail)
        // It answers anything GW_OK: the malformed battery names that too.
        let malformed = try XCTUnwrap(report.steps.first { $0.name == "malformed-authorize" }, result.stdout)
        XCTAssertFalse(malformed.passed)
        XCTAssertTrue(malformed.detail.contains("not JSON: answered GW_OK"), malformed.detail)
    }

    /// Broken adapters built in the suite: plugin check fails each, naming
    /// the check that caught it and saying what the adapter did.
    func testPluginCheckFailsOnBrokenAdaptersNamingTheCheck() async throws {
        struct Case { var adapter: FabricatedAdapter; var manifest: [String: Any?] = [:]; var step: String; var detail: String }
        let cases = [
            Case(adapter: FabricatedAdapter(id: "nocompletion", completions: 0), step: "authorize", detail: "no completion within"),
            Case(adapter: FabricatedAdapter(id: "nocompletion2", completions: 0), step: "cancel", detail: "still owes its completion"),
            Case(adapter: FabricatedAdapter(id: "nostatus", resultDocument: #"{"providerReference":"fab_1"}"#),
                 step: "authorize", detail: "the result document is invalid"),
            // In a runner (the manifest's isolation), so the crash costs the check nothing but the step.
            Case(adapter: FabricatedAdapter(id: "crashy", crashOnMalformed: true), manifest: ["isolation": "process"],
                 step: "malformed-request", detail: "expected GW_E_INVALID_REQUEST for a request that is not JSON"),
        ]
        for item in cases {
            let folder = try ManifestFolder()
            let manifest = try await item.adapter.install(in: folder, manifestName: "\(item.adapter.id).json", manifestChanges: item.manifest)
            let result = try gateway(["plugin", "check", manifest.path, "--json", "--timeout", "1"], folder: folder)
            XCTAssertNotEqual(result.status, 0, item.adapter.id)
            struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
            let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
            let step = try XCTUnwrap(report.steps.first { $0.name == item.step }, "\(item.adapter.id): \(result.stdout)")
            XCTAssertFalse(step.passed, "\(item.adapter.id): \(step.detail)")
            XCTAssertTrue(step.detail.contains(item.detail), "\(item.adapter.id): \(step.detail)")
        }
    }

    /// `--soak` calls the adapter for that long after the checks, each call checked.
    func testPluginCheckSoaksAnAdapterWhenAsked() throws {
        let folder = try ManifestFolder()
        let result = try gateway(["plugin", "check", folder.manifests.appendingPathComponent("example-c.json").path, "--soak", "1", "--json", "--timeout", "120"], folder: folder)
        XCTAssertEqual(result.status, 0, result.output)
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let soak = try XCTUnwrap(report.steps.first { $0.name == "soak" }, result.stdout)
        XCTAssertTrue(soak.passed && soak.detail.contains("calls in 1.0 seconds, each completed once"), soak.detail)
        let refused = try gateway(["plugin", "check", folder.manifests.appendingPathComponent("example-c.json").path, "--soak", "0"], folder: folder)
        XCTAssertTrue(refused.output.contains("--soak must be 1 to 86400 seconds (got 0)"), refused.output)
    }

    /// `plugin new --lang c` writes a skeleton that builds with the README's
    /// one build line and passes the README's one check line, as a third
    /// party would run them; it never writes over a folder, nor takes a bad id.
    func testPluginNewWritesACSkeletonThatBuildsAndPassesTheCheck() async throws {
        let folder = try ManifestFolder()
        let dir = folder.root.appendingPathComponent("acme")
        let made = try runProcess(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path])
        XCTAssertEqual(made.status, 0, made.output)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertEqual(names, ["README.md", "acme-pay.c", "acme-pay.json", "gateway_abi.h"])
        let readme = try String(contentsOf: dir.appendingPathComponent("README.md"), encoding: .utf8)
        let build = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix("cc ") }, readme)
        let built = try await runProcessOffThePool("/bin/sh", ["-c", "cd '\(dir.path)' && \(build)"])
        XCTAssertEqual(built.status, 0, built.output)
        let check = try gateway(["plugin", "check", dir.appendingPathComponent("acme-pay.json").path, "--timeout", "120"], folder: folder)
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertTrue(check.output.contains("acme-pay 1.0.0") && check.output.contains("checks passed"), check.output)
        XCTAssertFalse(check.output.contains("example-c"), check.output)

        let again = try runProcess(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.output.contains("exists and is not empty"), again.output)
        let bad = try runProcess(BuildProducts.gateway.path, ["plugin", "new", "Acme Pay", "--lang", "c", "--dir", folder.root.appendingPathComponent("bad").path])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.output.contains("the id \"Acme Pay\" is not valid"), bad.output)
    }

    func testPluginCheckReportsAnInvalidManifest() throws {
        let folder = try ManifestFolder()
        let url = try folder.write("bad.json", #"{"file_format_version": "1.0.0", "id": "Bad Id"}"#)
        let result = try gateway(["plugin", "check", url.path], folder: folder)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.output.contains("$.id"), result.output)
        XCTAssertTrue(result.output.contains("$.library: is required"), result.output)
    }
}
