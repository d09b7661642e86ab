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
        /// An adapter, and the steps (name, words of its detail) that must fail for it.
        struct Case { var adapter: FabricatedAdapter; var manifest: [String: Any?] = [:]; var failing: [(step: String, detail: String)] }
        let cases = [
            Case(adapter: FabricatedAdapter(id: "nocompletion", completions: 0),
                 failing: [("authorize", "no completion within"), ("cancel", "got no completion")]),
            Case(adapter: FabricatedAdapter(id: "nostatus", resultDocument: #"{"providerReference":"fab_1"}"#),
                 failing: [("authorize", "the result document is invalid")]),
            // In a runner (the manifest's isolation), so the crash costs the check nothing but the step.
            Case(adapter: FabricatedAdapter(id: "crashy", crashOnMalformed: true), manifest: ["isolation": "process"],
                 failing: [("malformed-request", "expected GW_E_INVALID_REQUEST for a request that is not JSON")]),
            // In process by its manifest: the check runs it in a runner first, sees the crash there, and
            // never loads it into its own process (which the crash would end).
            Case(adapter: FabricatedAdapter(id: "crashy2", crashOnMalformed: true),
                 failing: [("runner:crashes", "the adapter's runner crashed"),
                           ("in-process", "not loaded into this process: the adapter crashed its runner")]),
            // An adapter that says why it refuses: the failed step says it too (first line in its detail).
            Case(adapter: FabricatedAdapter(id: "refuser", invokeStatus: 1, invokeLog: "authorize refused: orderId must be at most 32 bytes"),
                 failing: [("authorize", "GW_E_INVALID_REQUEST, though the manifest declares authorize (logged: warning: authorize refused: orderId must be at most 32 bytes"),
                           ("runner:authorize", "(logged: warning: authorize refused: orderId must be at most 32 bytes")]),
            // A result that keeps the reader's types but breaks the schema's rules, field by field.
            Case(adapter: FabricatedAdapter(id: "badfields", resultDocument: #"{"status":"failed","providerReference":"","amount":{"value":5,"currency":"sar"}}"#),
                 failing: [("authorize", "the result breaks its schema: providerReference : a non-empty string; amount.currency sar")]),
        ]
        for item in cases {
            let folder = try ManifestFolder()
            let manifest = try await item.adapter.install(in: folder, manifestName: "\(item.adapter.id).json", manifestChanges: item.manifest)
            let result = try gateway(["plugin", "check", manifest.path, "--json", "--timeout", "1"], folder: folder)
            XCTAssertNotEqual(result.status, 0, item.adapter.id)
            struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
            let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
            for (name, detail) in item.failing {
                let step = try XCTUnwrap(report.steps.first { $0.name == name }, "\(item.adapter.id): \(result.stdout)")
                XCTAssertFalse(step.passed, "\(item.adapter.id): \(step.detail)")
                XCTAssertTrue(step.detail.contains(detail), "\(item.adapter.id): \(step.detail)")
            }
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
        XCTAssertFalse(report.steps.contains { $0.name == "runner:soak" }, "the soak runs once, as the manifest loads it")
        // The report's evidence: the result field by field, each malformed case by name.
        let authorize = try XCTUnwrap(report.steps.first { $0.name == "authorize" }, result.stdout)
        let fields = Dictionary((authorize.evidence ?? []).map { ($0.field, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(fields["status"]?.value, "succeeded")
        XCTAssertEqual(fields["amount.currency"]?.rule, "ISO 4217 (^[A-Z]{3}$)")
        XCTAssertTrue(authorize.evidence?.allSatisfy(\.ok) == true, "\(authorize.evidence ?? [])")
        let malformed = try XCTUnwrap(report.steps.first { $0.name == "runner:malformed-authorize" }, result.stdout)
        XCTAssertEqual(malformed.evidence?.first { $0.field == "a fractional amount" }?.value, "refused with GW_E_INVALID_REQUEST")
        let refused = try gateway(["plugin", "check", folder.manifests.appendingPathComponent("example-c.json").path, "--soak", "0"], folder: folder)
        XCTAssertTrue(refused.output.contains("--soak must be 1 to 86400 seconds (got 0)"), refused.output)
    }

    /// Writes a skeleton with `plugin new`, runs its README's one build line
    /// (the line starting with `buildCommand`) in its folder, as a third party
    /// would, then the check on its manifest; returns the check's output.
    /// `tools` is put first on the PATH for the build (where cargo is).
    @discardableResult
    func assertSkeletonBuildsAndPasses(id: String, lang: String, buildCommand: String, files: [String], library: String,
                                       tools: URL? = nil, file: StaticString = #filePath, line: UInt = #line) async throws -> ProcessResult {
        let folder = try ManifestFolder()
        let dir = folder.root.appendingPathComponent("skeleton-\(lang)")
        let made = try runProcess(BuildProducts.gateway.path, ["plugin", "new", id, "--lang", lang, "--dir", dir.path])
        XCTAssertEqual(made.status, 0, made.output, file: file, line: line)
        XCTAssertEqual(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted(), files, file: file, line: line)
        let readme = try String(contentsOf: dir.appendingPathComponent("README.md"), encoding: .utf8)
        let build = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix(buildCommand + " ") }, readme, file: file, line: line)
        let path = tools.map { "PATH='\($0.path)':\"$PATH\" " } ?? ""
        let built = try await runProcessOffThePool("/bin/sh", ["-c", "cd '\(dir.path)' && \(path)\(build)"])
        XCTAssertEqual(built.status, 0, built.output, file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(library).path), "no \(library)", file: file, line: line)
        let check = try gateway(["plugin", "check", dir.appendingPathComponent("\(id).json").path, "--timeout", "120"], folder: folder)
        XCTAssertEqual(check.status, 0, check.output, file: file, line: line)
        XCTAssertTrue(check.output.contains("\(id) 1.0.0") && check.output.contains("checks passed"), check.output, file: file, line: line)
        XCTAssertFalse(check.output.contains("example-"), "the skeleton still names its example: \(check.output)", file: file, line: line)
        return check
    }

    /// `plugin new --lang c` writes a skeleton that builds with the README's
    /// one build line and passes the README's one check line, as a third
    /// party would run them; it never writes over a folder, nor takes a bad id.
    func testPluginNewWritesACSkeletonThatBuildsAndPassesTheCheck() async throws {
        try await assertSkeletonBuildsAndPasses(id: "acme-pay", lang: "c", buildCommand: "cc",
                                                files: ["README.md", "acme-pay.c", "acme-pay.json", "gateway_abi.h"], library: "libacme-pay.so")
        let folder = try ManifestFolder()
        let dir = folder.root.appendingPathComponent("acme")
        XCTAssertEqual(try runProcess(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path]).status, 0)
        let again = try runProcess(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.output.contains("exists and is not empty"), again.output)
        let bad = try runProcess(BuildProducts.gateway.path, ["plugin", "new", "Acme Pay", "--lang", "c", "--dir", folder.root.appendingPathComponent("bad").path])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.output.contains("the id \"Acme Pay\" is not valid"), bad.output)
    }

    /// `plugin new --lang swift`: example-swift beside the header and a module
    /// map, built by one `swiftc` line (an id starting with a digit gets a
    /// module name that is an identifier).
    func testPluginNewWritesASwiftSkeletonThatBuildsAndPassesTheCheck() async throws {
        try await assertSkeletonBuildsAndPasses(id: "7-acme", lang: "swift", buildCommand: "swiftc",
                                                files: ["7-acme.json", "7-acme.swift", "README.md", "gateway_abi.h", "module.modulemap"],
                                                library: "lib7-acme.so")
    }

    /// `plugin new --lang rust`: the example-rust crate renamed (an id starting
    /// with a digit gets a crate name cargo takes), built by `cargo build --release`.
    func testPluginNewWritesARustSkeletonThatBuildsAndPassesTheCheck() async throws {
        guard let cargo = RustAdapterBuild.cargo else { throw XCTSkip("cargo is not installed (scripts/install-prerequisites)") }
        try await assertSkeletonBuildsAndPasses(id: "9-acme", lang: "rust", buildCommand: "cargo",
                                                files: [".gitignore", "9-acme.json", "Cargo.toml", "README.md", "src", "src/abi.rs", "src/adapter.rs",
                                                        "src/boundary.rs", "src/json.rs", "src/lib.rs", "src/provider.rs"],
                                                library: "target/release/libgw_9_acme.so", tools: cargo.deletingLastPathComponent())
    }

    /// An id that would name a module or crate the toolchain refuses gets a prefix.
    func testPluginNewPrefixesNamesTheToolchainsReserve() throws {
        let folder = try ManifestFolder()
        for (id, lang, file, expected) in [("swift", "swift", "README.md", "-module-name AdapterSwift"),
                                          ("dispatch", "swift", "README.md", "-module-name AdapterDispatch"),
                                          ("fn", "rust", "Cargo.toml", "name = \"gw_fn\""),
                                          ("std", "rust", "Cargo.toml", "name = \"gw_std\"")] {
            let dir = folder.root.appendingPathComponent("\(lang)-\(id)")
            let made = try runProcess(BuildProducts.gateway.path, ["plugin", "new", id, "--lang", lang, "--dir", dir.path])
            XCTAssertEqual(made.status, 0, made.output)
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            XCTAssertTrue(text.contains(expected), "\(id): \(text)")
        }
    }

    /// The shipped Swift example, built by SwiftPM beside `gateway`, passes the check.
    func testTheSwiftExamplePassesTheCheck() throws {
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = BuildProducts.repository.appendingPathComponent("Plugins/ExampleSwift/example-swift.json")
        let check = try gateway(["plugin", "check", manifest.path, "--timeout", "120"], folder: folder)
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertTrue(check.output.contains("example-swift 1.0.0") && check.output.contains("all 15 checks passed"), check.output)
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
