import Foundation
@testable import PluginHost
import Testing
import TestSupport

/// The `gateway` executable, run as an operator or a plugin author would.
///
/// Every test runs `gateway` processes (and some build skeletons with cc,
/// swiftc or cargo): each is `.heavy`, those that compile with swiftc or cargo
/// `.heavy(.exclusive)`. The traits are on the tests, not the suite: a test
/// under a `.heavy` suite that is itself `.heavy(.exclusive)` would wait for
/// every slot while holding one.
@Suite struct CLITests {
    struct Row: Decodable {
        var id: String?
        var version: String?
        var enabled: Bool?
        var state: String
        var reason: String?
        var reasonKind: String?
        var methods: [String]
    }

    /// `--timeout` of `gateway plugin check` where the adapter answers: a
    /// backstop (seconds), never what decides the check on a slow machine.
    static let checkTimeout = String(Int(TestTime.seconds(120).rounded(.up)))

    func gateway(_ arguments: [String], folder: ManifestFolder) async throws -> ProcessResult {
        try await runProcessOffThePool(BuildProducts.gateway.path, arguments + ["--data", folder.root.appendingPathComponent("data").path])
    }

    func providers(_ folder: ManifestFolder) async throws -> [Row] {
        let result = try await gateway(["providers", "--json", "--manifests", folder.manifests.path], folder: folder)
        #expect(result.status == 0, "\(result.output)")
        return try JSONDecoder().decode([Row].self, from: Data(result.stdout.utf8))
    }

    @Test(.heavy) func providersListsTheShippedAdaptersAsLoaded() async throws {
        let rows = try await providers(try ManifestFolder())
        #expect(rows.map(\.id) == ["example-c", "mock"])
        #expect(rows.allSatisfy { $0.state == "loaded" && $0.reason == nil })
        #expect(rows.first { $0.id == "mock" }?.methods.count == 11)
    }

    @Test(.heavy) func serveRefusesSecondsOutOfRangeNamingTheOption() async throws {
        let folder = try ManifestFolder()
        for (option, range, values) in [("applepay-signing-window", "0 to 604800", ["-1", "604801"]), ("shutdown-timeout", "1 to 3600", ["0", "3601"])] {
            for value in values {
                let result = try await gateway(["serve", "--manifests", folder.manifests.path, "--port", "0", "--\(option)=\(value)"], folder: folder)
                #expect(result.status != 0, "\(result.output)")
                #expect(result.output.contains("--\(option) must be \(range) seconds (got \(value))"), "\(result.output)")
            }
        }
    }

    @Test(.heavy) func wrongDigestRefusesMockWhileExampleCStaysLoaded() async throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": String(repeating: "ab", count: 32)])
        let rows = try await providers(folder)
        let mock = try #require(rows.first { $0.id == "mock" })
        #expect(mock.state == "refused")
        #expect(mock.reasonKind == "digest_mismatch")
        #expect(mock.reason?.contains("sha256 digest mismatch") == true, "\(mock.reason ?? "")")
        #expect(rows.first { $0.id == "example-c" }?.state == "loaded")
    }

    @Test(.heavy) func disableAndEnableFlipOnlyThatMemberAtomically() async throws {
        let folder = try ManifestFolder()
        let url = folder.manifests.appendingPathComponent("mock.json")
        let original = try String(contentsOf: url, encoding: .utf8)

        let disabled = try await gateway(["providers", "disable", "mock", "--manifests", folder.manifests.path], folder: folder)
        #expect(disabled.status == 0, "\(disabled.output)")
        let edited = try String(contentsOf: url, encoding: .utf8)
        #expect(edited == original.replacingOccurrences(of: "\"enabled\": true", with: "\"enabled\": false"))
        let rows = try await providers(folder)
        #expect(rows.first { $0.id == "mock" }?.state == "disabled")
        // No temporary file is left behind.
        #expect(try ManifestFile.list(in: folder.manifests).map(\.lastPathComponent) == ["example-c.json", "mock.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.manifests.path).allSatisfy { !$0.hasSuffix(".tmp") })

        let enabled = try await gateway(["providers", "enable", "mock", "--manifests", folder.manifests.path], folder: folder)
        #expect(enabled.status == 0, "\(enabled.output)")
        #expect(try String(contentsOf: url, encoding: .utf8) == original)
    }

    @Test(.heavy) func enablingAnUnknownProviderFailsClearly() async throws {
        let folder = try ManifestFolder()
        let result = try await gateway(["providers", "enable", "nope", "--manifests", folder.manifests.path], folder: folder)
        #expect(result.status != 0)
        #expect(result.output.contains("no valid manifest with id \"nope\""), "\(result.output)")
    }

    @Test(.heavy) func pinWritesTheLibraryDigestAndTheManifestStillLoads() async throws {
        let folder = try ManifestFolder()
        let result = try await gateway(["providers", "pin", "example-c", "--manifests", folder.manifests.path], folder: folder)
        #expect(result.status == 0, "\(result.output)")
        let manifest = try ManifestFile.read(folder.manifests.appendingPathComponent("example-c.json")).get()
        let digest = LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.exampleCLibrary))
        #expect(manifest.sha256 == digest)
        let rows = try await providers(folder)
        #expect(rows.first { $0.id == "example-c" }?.state == "loaded")
    }

    @Test(.heavy) func pluginCheckPassesForBothShippedAdapters() async throws {
        let folder = try ManifestFolder()
        for name in ["mock.json", "example-c.json"] {
            let result = try await gateway(["plugin", "check", folder.manifests.appendingPathComponent(name).path, "--timeout", Self.checkTimeout],
                                           folder: folder)
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("checks passed"), "\(result.output)")
            #expect(!result.output.contains("FAIL"), "\(result.output)")
        }
    }

    @Test(.heavy) func pluginCheckFailsOnAnAdapterThatCompletesTwice() async throws {
        let folder = try ManifestFolder()
        let manifest = try await FabricatedAdapter(id: "twice", completions: 2).install(in: folder, manifestName: "twice.json")
        let result = try await gateway(["plugin", "check", manifest.path, "--json", "--timeout", Self.checkTimeout], folder: folder)
        #expect(result.status != 0)
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(result.stderr.contains("second completion"), "\(result.stderr)")
        #expect(!report.passed)
        #expect(report.steps.first { $0.name == "exactly-once" }?.passed == false)
    }

    /// An adapter that answers every authorize afresh (it ignores the key)
    /// fails the idempotency check, which says what it did.
    @Test(.heavy) func pluginCheckFailsOnAnAdapterThatIgnoresIdempotency() async throws {
        let folder = try ManifestFolder()
        let manifest = try await FabricatedAdapter(id: "noidem").install(in: folder, manifestName: "noidem.json")
        let result = try await gateway(["plugin", "check", manifest.path, "--json", "--timeout", Self.checkTimeout], folder: folder)
        #expect(result.status != 0)
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let step = try #require(report.steps.first { $0.name == "idempotency" }, "\(result.stdout)")
        #expect(!step.passed)
        #expect(step.detail.contains("the same request under the same key was answered differently"), "\(step.detail)")
        // It answers anything GW_OK: the malformed battery names that too.
        let malformed = try #require(report.steps.first { $0.name == "malformed-authorize" }, "\(result.stdout)")
        #expect(!malformed.passed)
        #expect(malformed.detail.contains("not JSON: answered GW_OK"), "\(malformed.detail)")
    }

    /// Broken adapters built in the suite: plugin check fails each, naming
    /// the check that caught it and saying what the adapter did.
    @Test(.heavy) func pluginCheckFailsOnBrokenAdaptersNamingTheCheck() async throws {
        /// An adapter, and the steps (name, words of its detail) that must fail for it.
        struct Case {
            var adapter: FabricatedAdapter
            var manifest: [String: Any?] = [:]
            /// The check's `--timeout`: a backstop, except for an adapter whose
            /// steps must run out of it.
            var timeout = CLITests.checkTimeout
            var failing: [(step: String, detail: String)]
        }
        let cases = [
            // Never completes: its steps are expected to run out of the check's deadline (kept at 1 s).
            Case(adapter: FabricatedAdapter(id: "nocompletion", completions: 0), timeout: "1",
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
            let result = try await gateway(["plugin", "check", manifest.path, "--json", "--timeout", item.timeout], folder: folder)
            #expect(result.status != 0, "\(item.adapter.id)")
            struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
            let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
            for (name, detail) in item.failing {
                let step = try #require(report.steps.first { $0.name == name }, "\(item.adapter.id): \(result.stdout)")
                #expect(!step.passed, "\(item.adapter.id): \(step.detail)")
                #expect(step.detail.contains(detail), "\(item.adapter.id): \(step.detail)")
            }
        }
    }

    /// `--soak` calls the adapter for that long after the checks, each call checked.
    @Test(.heavy) func pluginCheckSoaksAnAdapterWhenAsked() async throws {
        let folder = try ManifestFolder()
        let result = try await gateway(["plugin", "check", folder.manifests.appendingPathComponent("example-c.json").path, "--soak", "1", "--json",
                                        "--timeout", Self.checkTimeout], folder: folder)
        #expect(result.status == 0, "\(result.output)")
        struct Report: Decodable { var passed: Bool; var steps: [ConformanceCheck.Step] }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let soak = try #require(report.steps.first { $0.name == "soak" }, "\(result.stdout)")
        #expect(soak.passed && soak.detail.contains("calls in 1.0 seconds, each completed once"), "\(soak.detail)")
        #expect(!report.steps.contains { $0.name == "runner:soak" }, "the soak runs once, as the manifest loads it")
        // Each pass's peak OS threads under the concurrency step, in the JSON as `threads`.
        for (name, least) in [("runner:concurrency", 1), ("concurrency", 0)] {
            let step = try #require(report.steps.first { $0.name == name }, "\(result.stdout)")
            #expect(step.passed && (step.threads ?? -1) >= least, "\(name): \(step)")
        }
        #expect(result.stdout.contains("\"threads\""), "\(result.stdout.prefix(2000))")
        // The report's evidence: the result field by field, each malformed case by name.
        let authorize = try #require(report.steps.first { $0.name == "authorize" }, "\(result.stdout)")
        let fields = Dictionary((authorize.evidence ?? []).map { ($0.field, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(fields["status"]?.value == "succeeded")
        #expect(fields["amount.currency"]?.rule == "ISO 4217 (^[A-Z]{3}$)")
        #expect(authorize.evidence?.allSatisfy(\.ok) == true, "\(authorize.evidence ?? [])")
        let malformed = try #require(report.steps.first { $0.name == "runner:malformed-authorize" }, "\(result.stdout)")
        #expect(malformed.evidence?.first { $0.field == "a fractional amount" }?.value == "refused with GW_E_INVALID_REQUEST")
        let refused = try await gateway(["plugin", "check", folder.manifests.appendingPathComponent("example-c.json").path, "--soak", "0"], folder: folder)
        #expect(refused.output.contains("--soak must be 1 to 86400 seconds (got 0)"), "\(refused.output)")
    }

    /// Writes a skeleton with `plugin new`, runs its README's one build line
    /// (the line starting with `buildCommand`) in its folder, as a third party
    /// would, then the check on its manifest; returns the check's output.
    /// `tools` is put first on the PATH for the build (where cargo is).
    @discardableResult
    func assertSkeletonBuildsAndPasses(id: String, lang: String, buildCommand: String, files: [String], library: String,
                                       tools: URL? = nil, ignoring ignored: Set<String> = [],
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> (output: String, folder: URL, root: ManifestFolder) {
        let folder = try ManifestFolder()
        let dir = folder.root.appendingPathComponent("skeleton-\(lang)")
        let made = try await runProcessOffThePool(BuildProducts.gateway.path, ["plugin", "new", id, "--lang", lang, "--dir", dir.path])
        #expect(made.status == 0, "\(made.output)", sourceLocation: sourceLocation)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted() == files, sourceLocation: sourceLocation)
        let readme = try String(contentsOf: dir.appendingPathComponent("README.md"), encoding: .utf8)
        let build = try #require(readme.split(separator: "\n").first { $0.hasPrefix(buildCommand + " ") }, "\(readme)", sourceLocation: sourceLocation)
        let path = tools.map { "PATH='\($0.path)':\"$PATH\" " } ?? ""
        let built = try await runProcessOffThePool("/bin/sh", ["-c", "cd '\(dir.path)' && \(path)\(build)"])
        #expect(built.status == 0, "\(built.output)", sourceLocation: sourceLocation)
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(library).path), "no \(library)", sourceLocation: sourceLocation)
        let check = try await gateway(["plugin", "check", dir.appendingPathComponent("\(id).json").path, "--timeout", Self.checkTimeout], folder: folder)
        #expect(check.status == 0, "\(check.output)", sourceLocation: sourceLocation)
        #expect(check.output.contains("\(id) 1.0.0") && check.output.contains("checks passed"), "\(check.output)", sourceLocation: sourceLocation)
        #expect(!check.output.contains("example-"), "the skeleton still names its example: \(check.output)", sourceLocation: sourceLocation)
        let left = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter { path in
            !ignored.contains { path == $0 || path.hasPrefix($0 + "/") }
        }
        #expect(Set(left).isSuperset(of: files), sourceLocation: sourceLocation)
        return (check.output, dir, folder)
    }

    /// `plugin new --lang c` writes a skeleton that builds with the README's
    /// one build line and passes the README's one check line, as a third
    /// party would run them; it never writes over a folder, nor takes a bad id.
    @Test(.heavy) func pluginNewWritesACSkeletonThatBuildsAndPassesTheCheck() async throws {
        try await assertSkeletonBuildsAndPasses(id: "acme-pay", lang: "c", buildCommand: "cc",
                                                files: ["README.md", "acme-pay.c", "acme-pay.json", "gateway_abi.h"], library: "libacme-pay.so")
        let folder = try ManifestFolder()
        let dir = folder.root.appendingPathComponent("acme")
        let made = try await runProcessOffThePool(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path])
        #expect(made.status == 0)
        let again = try await runProcessOffThePool(BuildProducts.gateway.path, ["plugin", "new", "acme-pay", "--lang", "c", "--dir", dir.path])
        #expect(again.status != 0)
        #expect(again.output.contains("exists and is not empty"), "\(again.output)")
        let bad = try await runProcessOffThePool(BuildProducts.gateway.path,
                                                 ["plugin", "new", "Acme Pay", "--lang", "c", "--dir", folder.root.appendingPathComponent("bad").path])
        #expect(bad.status != 0)
        #expect(bad.output.contains("the id \"Acme Pay\" is not valid"), "\(bad.output)")
    }

    /// `plugin new --lang swift`: swift-skeleton renamed, a SwiftPM package on
    /// the adapter SDK of this checkout, built by `swift build -c release`
    /// (an id starting with a digit gets a module name that is an
    /// identifier); it passes the check in a runner, and in process too.
    @Test(.heavy(.exclusive)) func pluginNewWritesAnSDKSwiftSkeletonThatBuildsAndPassesTheCheck() async throws {
        let check = try await assertSkeletonBuildsAndPasses(
            id: "7-acme", lang: "swift", buildCommand: "swift",
            files: ["7-acme.json", "Package.swift", "README.md", "Sources", "Sources/Adapter7Acme", "Sources/Adapter7Acme/Adapter7Acme.swift"],
            library: ".build/release/libAdapter7Acme.so", ignoring: [".build", "Package.resolved"])
        #expect(check.output.contains("describe") && check.output.contains("operations authorize, verify, capture, refund, void"), "\(check.output)")
        let source = try String(contentsOf: check.folder.appendingPathComponent("Sources/Adapter7Acme/Adapter7Acme.swift"), encoding: .utf8)
        #expect(!source.contains("func handle("), "the SDK dispatches: the skeleton writes one method per operation")
        // The same library in the host's process.
        let manifest = check.folder.appendingPathComponent("7-acme.json")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "\"isolation\": \"process\"", with: "\"isolation\": \"in-process\"")
        #expect(text.contains("\"isolation\": \"in-process\""), "\(text)")
        try Data(text.utf8).write(to: manifest)
        let folder = try ManifestFolder()
        let inProcess = try await gateway(["plugin", "check", manifest.path, "--timeout", Self.checkTimeout], folder: folder)
        #expect(inProcess.status == 0 && inProcess.output.contains("runner:authorize") && inProcess.output.contains("checks passed"), "\(inProcess.output)")
    }

    /// `plugin new --lang swift-header`: example-swift beside the header and a
    /// module map, built by one `swiftc` line (an id starting with a digit
    /// gets a module name that is an identifier).
    @Test(.heavy(.exclusive)) func pluginNewWritesAHeaderOnlySwiftSkeletonThatBuildsAndPassesTheCheck() async throws {
        try await assertSkeletonBuildsAndPasses(id: "7-acme", lang: "swift-header", buildCommand: "swiftc",
                                                files: ["7-acme.json", "7-acme.swift", "README.md", "gateway_abi.h", "module.modulemap"],
                                                library: "lib7-acme.so")
    }

    /// `plugin new --lang rust`: the example-rust crate renamed (an id starting
    /// with a digit gets a crate name cargo takes), built by `cargo build --release`.
    @Test(.heavy(.exclusive), .enabled(if: RustAdapterBuild.isAvailable, "cargo is not installed (scripts/install-prerequisites)"))
    func pluginNewWritesARustSkeletonThatBuildsAndPassesTheCheck() async throws {
        let cargo = try #require(RustAdapterBuild.cargo, "cargo is not installed (scripts/install-prerequisites)")
        try await assertSkeletonBuildsAndPasses(id: "9-acme", lang: "rust", buildCommand: "cargo",
                                                files: [".gitignore", "9-acme.json", "Cargo.toml", "README.md", "src", "src/abi.rs", "src/adapter.rs",
                                                        "src/boundary.rs", "src/json.rs", "src/lib.rs", "src/provider.rs"],
                                                library: "target/release/libgw_9_acme.so", tools: cargo.deletingLastPathComponent())
    }

    /// `plugin new --lang go`: example-go renamed (cgo, a panic barrier at
    /// every export, the work on goroutines, strict JSON with the standard
    /// library), built by `go build -buildmode=c-shared` with Debian's Go; it
    /// passes the check in a runner, and in process too.
    @Test(.heavy(.exclusive), .enabled(if: GoAdapterBuild.isAvailable, "go is not installed (scripts/install-prerequisites)"))
    func pluginNewWritesAGoSkeletonThatBuildsAndPassesTheCheck() async throws {
        let go = try #require(GoAdapterBuild.go, "go is not installed (scripts/install-prerequisites)")
        let made = try await assertSkeletonBuildsAndPasses(
            id: "5-acme", lang: "go", buildCommand: "go",
            files: ["5-acme.json", "README.md", "adapter.go", "gateway_abi.h", "go.mod", "shim.c"], library: "lib5-acme.so",
            tools: go.deletingLastPathComponent(), ignoring: ["lib5-acme.so", "lib5-acme.h"])
        #expect(made.output.contains("operations authorize, verify, capture, refund, void"), "\(made.output)")
        let source = try String(contentsOf: made.folder.appendingPathComponent("adapter.go"), encoding: .utf8)
        #expect(source.contains("defer barrier(") && source.contains("recover()"), "every export has its panic barrier")
        // The same library in the host's process (a manifest in process has no limits).
        let manifest = made.folder.appendingPathComponent("5-acme.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifest)) as? [String: Any])
        object["isolation"] = "in-process"
        object["limits"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: manifest)
        let folder = try ManifestFolder()
        let inProcess = try await gateway(["plugin", "check", manifest.path, "--timeout", Self.checkTimeout], folder: folder)
        #expect(inProcess.status == 0 && inProcess.output.contains("runner:concurrency") && inProcess.output.contains("all 35 checks passed"),
                "\(inProcess.output)")
    }

    /// An id that would name a module or crate the toolchain refuses gets a prefix.
    @Test(.heavy) func pluginNewPrefixesNamesTheToolchainsReserve() async throws {
        let folder = try ManifestFolder()
        for (id, lang, file, expected) in [("swift", "swift-header", "README.md", "-module-name AdapterSwift"),
                                          ("dispatch", "swift-header", "README.md", "-module-name AdapterDispatch"),
                                          ("dispatch", "swift", "Package.swift", "name: \"AdapterDispatch\""),
                                          ("fn", "rust", "Cargo.toml", "name = \"gw_fn\""),
                                          ("std", "rust", "Cargo.toml", "name = \"gw_std\"")] {
            let dir = folder.root.appendingPathComponent("\(lang)-\(id)-\(file)")
            let made = try await runProcessOffThePool(BuildProducts.gateway.path, ["plugin", "new", id, "--lang", lang, "--dir", dir.path])
            #expect(made.status == 0, "\(made.output)")
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains(expected), "\(id): \(text)")
        }
    }

    /// The shipped Swift example, built by SwiftPM beside `gateway`, passes the check.
    @Test(.heavy) func theSwiftExamplePassesTheCheck() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let manifest = BuildProducts.repository.appendingPathComponent("Plugins/ExampleSwift/example-swift.json")
        let check = try await gateway(["plugin", "check", manifest.path, "--timeout", Self.checkTimeout], folder: folder)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("example-swift 1.0.0") && check.output.contains("all 15 checks passed"), "\(check.output)")
    }

    @Test(.heavy) func pluginCheckReportsAnInvalidManifest() async throws {
        let folder = try ManifestFolder()
        let url = try folder.write("bad.json", #"{"file_format_version": "1.0.0", "id": "Bad Id"}"#)
        let result = try await gateway(["plugin", "check", url.path], folder: folder)
        #expect(result.status != 0)
        #expect(result.output.contains("$.id"), "\(result.output)")
        #expect(result.output.contains("$.library: is required"), "\(result.output)")
    }
}
