import Foundation
import GatewayPayloads
@testable import PluginHost
import TestSupport
import Testing

/// A manifest is a test or a live provider (file format 1.1). Nothing unmarked
/// is ever taken for a test provider: a 1.0 manifest without `mode` is live,
/// and a 1.1 manifest must say.
@Suite("Manifest mode")
struct ManifestModeTests {
    /// A minimal valid manifest of file format `format`, with `mode` when given
    /// (raw JSON, so that wrong types can be written too).
    static func manifest(format: String, mode: String?) -> Data {
        let member = mode.map { #", "mode": \#($0)"# } ?? ""
        return Data("""
            {"file_format_version": "\(format)", "id": "acme", "version": "1.0.0", "enabled": true\(member),
             "library": "libAcme.so", "abi": {"major": 1, "minor": 0}, "methods": ["visa"],
             "currencies": ["SAR"], "countries": ["SA"], "operations": ["authorize"]}
            """.utf8)
    }

    static func problems(_ data: Data) -> [ManifestProblem] {
        if case .invalid(let problems, _) = ManifestValidator.validate(data) { return problems }
        return []
    }

    @Test(arguments: ["1.0.0", "1.0.7", "1.00.0"])
    func aFileFormat10ManifestWithoutModeIsLive(format: String) throws {
        guard case .valid(let manifest) = ManifestValidator.validate(Self.manifest(format: format, mode: nil)) else {
            Issue.record("a \(format) manifest without mode must stay valid")
            return
        }
        #expect(manifest.mode == .live)
    }

    @Test(arguments: ["1.1.0", "1.1.3", "1.2.0", "1.01.0", "1.10.0", "1.99999999999999999999.0"])
    func aFileFormat11ManifestWithoutModeIsRefusedWithItsPath(format: String) {
        let problems = Self.problems(Self.manifest(format: format, mode: nil))
        #expect(problems.map(\.path) == ["$.mode"])
        #expect(problems.first?.message == #"is required from file format 1.1 ("test" or "live"); this manifest is \#(format)"#)
    }

    @Test(arguments: [
        (#""test""#, PaymentMode.test), (#""live""#, PaymentMode.live),
    ])
    func aManifestDeclaresItsMode(json: String, mode: PaymentMode) throws {
        for format in ["1.1.0", "1.0.0"] {
            guard case .valid(let manifest) = ManifestValidator.validate(Self.manifest(format: format, mode: json)) else {
                Issue.record("\(format) with mode \(json) must be valid")
                continue
            }
            #expect(manifest.mode == mode, "\(format)")
        }
    }

    @Test(arguments: [#""sandbox""#, #""Test""#, #""LIVE""#, #""""#, "1", "true", "null", #"["test"]"#])
    func aModeOtherThanTestOrLiveIsRefusedWithItsPath(json: String) {
        for format in ["1.1.0", "1.0.0"] {
            let problems = Self.problems(Self.manifest(format: format, mode: json))
            #expect(problems.map(\.path) == ["$.mode"], "\(format) mode \(json)")
            #expect(problems.first?.message == #"must be "test" or "live", found \#(json)"#, "\(format) mode \(json)")
        }
    }

    @Test func theModeProblemIsReportedBesideTheOthers() {
        let text = #"{"file_format_version": "1.1.0", "id": "acme", "version": "1.0.0", "enabled": true, "mode": "prod", "abi": {"major": 1, "minor": 0}, "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"], "operations": ["charge"]}"#
        let paths = Set(Self.problems(Data(text.utf8)).map(\.path))
        #expect(paths == ["$.mode", "$.library", "$.operations[0]"])
    }

    @Test func theShippedMockAndExampleCAreTestAndTheProvidersAreLive() throws {
        var modes: [String: PaymentMode] = [:]
        for url in try ManifestFile.list(in: BuildProducts.shippedManifests) {
            let manifest = try ManifestFile.read(url).get()
            #expect(manifest.fileFormatVersion == "1.1.0", "\(url.lastPathComponent)")
            modes[manifest.id] = manifest.mode
        }
        #expect(modes == ["mock": .test, "example-c": .test,
                          "hyperpay": .live, "stcpay": .live, "tabby": .live, "tamara": .live, "swedbankpay": .live, "worldline": .live])
    }

    @Test func sandboxModeRunsEveryShippedProviderAsTest() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-mode-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let overlay = SandboxOverlay(baseURL: "http://127.0.0.1:49152", secrets: [:], secretsDirectory: folder)
        var sandboxed: [String: PaymentMode] = [:]
        for url in try ManifestFile.list(in: BuildProducts.shippedManifests) {
            let manifest = try ManifestFile.read(url).get()
            let overlaid = try overlay.apply(to: manifest)
            if manifest.sandboxConfigJSON != nil {
                #expect(manifest.mode == .live, "\(manifest.id) ships live")
                sandboxed[manifest.id] = overlaid.mode
            } else {
                #expect(overlaid == manifest, "\(manifest.id) has no sandbox block: loaded as it is")
            }
        }
        #expect(sandboxed == ["hyperpay": .test, "stcpay": .test, "tabby": .test, "tamara": .test, "swedbankpay": .test, "worldline": .test])
    }

    @Test func theSchemaDeclaresModeAndRequiresItFromFileFormat11() throws {
        let url = BuildProducts.shippedManifests.appendingPathComponent("schema/manifest-v1.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let mode = try #require((schema["properties"] as? [String: Any])?["mode"] as? [String: Any])
        #expect(mode["enum"] as? [String] == PaymentMode.allCases.map(\.rawValue))
        // `if` the format is 1.0.x, nothing more; `else` mode is required.
        let condition = try #require(schema["if"] as? [String: Any])
        let format = try #require((condition["properties"] as? [String: Any])?["file_format_version"] as? [String: Any])
        let pattern = try #require(format["pattern"] as? String)
        for (version, isOneZero) in [("1.0.0", true), ("1.00.7", true), ("1.1.0", false), ("1.10.0", false), ("1.2.0", false)] {
            #expect((version.range(of: pattern, options: .regularExpression) != nil) == isOneZero, "\(version)")
        }
        #expect((schema["else"] as? [String: Any])?["required"] as? [String] == ["mode"])
    }
}

/// `gateway providers` shows each provider's mode, in the table and in `--json`.
@Suite("gateway providers mode", .heavy)
struct ProvidersModeOutputTests {
    struct Row: Decodable {
        var id: String?
        var mode: String?
        var state: String
    }

    @Test func providersShowEachProvidersMode() async throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "hyperpay.json", as: "hyperpay.json", [:])
        try folder.write("unmarked.json", String(decoding: ManifestModeTests.manifest(format: "1.1.0", mode: nil), as: UTF8.self))
        func gateway(_ arguments: [String]) async throws -> ProcessResult {
            let result = try await runProcessOffThePool(BuildProducts.gateway.path, ["providers"] + arguments + [
                "--manifests", folder.manifests.path, "--data", folder.root.appendingPathComponent("data").path])
            #expect(result.status == 0, "\(result.output)")
            return result
        }

        let rows = try JSONDecoder().decode([Row].self, from: Data(try await gateway(["--json"]).stdout.utf8))
        #expect(rows.map(\.id) == ["example-c", "hyperpay", "mock", "acme"])
        #expect(rows.map(\.mode) == ["test", "live", "test", nil])
        #expect(rows.map(\.state) == ["loaded", "disabled", "loaded", "refused"])

        let table = try await gateway([]).stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(table.first == ["ID", "VERSION", "MODE", "ENABLED", "STATE", "ISOLATION", "DIGEST", "METHODS"])
        let modeByID = Dictionary(table.dropFirst().prefix(4).map { ($0[0], $0[2]) }, uniquingKeysWith: { first, _ in first })
        #expect(modeByID == ["example-c": "test", "hyperpay": "live", "mock": "test", "acme": "?"])
    }
}

/// `gateway plugin check` says which mode the adapter would serve in its `manifest` line.
@Suite("plugin check mode", .heavy)
struct ConformanceCheckModeTests {
    @Test func pluginCheckReportsTheModeInItsManifestLine() async throws {
        let folder = try ManifestFolder()
        let unmarked = try folder.writeVariant(of: "example-c.json", as: "example-c-1.0.json", ["file_format_version": "1.0.0", "mode": nil, "fields": nil, "method_currencies": nil])
        let check = ConformanceCheck(loader: folder.loader, callTimeout: ConformanceCheck.suiteCallTimeout)
        for (url, line) in [(folder.manifests.appendingPathComponent("example-c.json"), "example-c 1.0.0, test mode, file format 1.1.0"),
                            (unmarked, "example-c 1.0.0, live mode, file format 1.0.0")] {
            let steps = await check.run(manifestAt: url)
            #expect(steps.first == ConformanceCheck.Step(name: "manifest", passed: true, detail: line))
            #expect(steps.filter { !$0.passed }.isEmpty, "\(steps.filter { !$0.passed })")
        }
    }
}
