import Crypto
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing

/// What a host says of the manifests it runs, so ops can compare hosts: each
/// record's SHA-256 of its manifest file's bytes, and the host's digest of
/// them all (the sorted lines `<id or file name> <sha256>\n`), the same from
/// `gateway providers` as from a running host.
@Suite struct ManifestDigestTests {
    /// SHA-256 in lower-case hex, computed here (not by the code under test).
    static func sha256(_ url: URL) throws -> String {
        Hex.lowercase(SHA256.hash(data: try Data(contentsOf: url)))
    }

    /// The host digest as the docs define it, from (key, file digest) pairs.
    static func hostDigest(_ pairs: [(String, String)]) -> String {
        let text = pairs.map { "\($0.0) \($0.1)\n" }.sorted().joined()
        return Hex.lowercase(SHA256.hash(data: Data(text.utf8)))
    }

    static func gateway(over folder: ManifestFolder) async throws -> PaymentGateway {
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.reconcileInterval = .seconds(3600)
        return try await PaymentGateway.open(configuration: configuration)
    }

    @Test func gatewayProvidersShowsEachManifestsDigestAndTheFoldersDigest() async throws {
        let folder = try ManifestFolder()
        let broken = try folder.write("broken.json", "{ \"id\": ")
        let expected = [("example-c", try Self.sha256(folder.manifests.appendingPathComponent("example-c.json"))),
                        ("mock", try Self.sha256(folder.manifests.appendingPathComponent("mock.json"))),
                        ("broken.json", try Self.sha256(broken))]
        let host = Self.hostDigest(expected)
        func gateway(_ arguments: [String]) async throws -> ProcessResult {
            let result = try await runProcessOffThePool(BuildProducts.gateway.path, ["providers"] + arguments + [
                "--manifests", folder.manifests.path, "--data", folder.root.appendingPathComponent("data").path])
            #expect(result.status == 0, "\(result.output)")
            return result
        }

        // --json: each row's digest in full; standard output stays the array, the host's digest goes to standard error.
        struct Row: Decodable { var id: String?; var manifest: String; var state: String; var manifestSha256: String? }
        let json = try await gateway(["--json"])
        let rows = try JSONDecoder().decode([Row].self, from: Data(json.stdout.utf8))
        #expect(rows.map { URL(fileURLWithPath: $0.manifest).lastPathComponent } == ["broken.json", "example-c.json", "mock.json"])
        #expect(rows.map(\.state) == ["refused", "loaded", "loaded"])
        #expect(rows.map(\.manifestSha256) == [expected[2].1, expected[0].1, expected[1].1], "a refused file carries the digest of the bytes refused")
        #expect(json.stderr.split(separator: "\n").map(String.init).contains("manifests digest: \(host)"), "\(json.stderr)")

        // The table: the first 12 hex digits of each, and of the host's digest on the last line.
        let lines = try await gateway([]).stdout.split(separator: "\n").map(String.init)
        let cells = lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        let digestColumn = try #require(cells.first?.firstIndex(of: "DIGEST"))
        let shown = Dictionary(cells.dropFirst().prefix(3).map { ($0[0], $0[digestColumn]) }, uniquingKeysWith: { first, _ in first })
        #expect(shown == ["?": String(expected[2].1.prefix(12)), "example-c": String(expected[0].1.prefix(12)),
                          "mock": String(expected[1].1.prefix(12))])
        #expect(lines.last == "manifests digest: \(host.prefix(12))")

        // One computation: a running host over the same folder reports the same digest.
        let running = try await Self.gateway(over: folder)
        #expect(running.manifestsDigest == host)
        await running.shutdown()
    }

    @Test func anAppliedEditChangesTheDigestsAndARefusedOneKeepsTheLastGood() async throws {
        let folder = try ManifestFolder()
        let gateway = try await Self.gateway(over: folder)
        let mockURL = folder.manifests.appendingPathComponent("mock.json")
        func mock() -> ProviderRecord? { gateway.providerRecords[id: "mock"] }
        let shipped = try Self.sha256(mockURL)
        #expect(mock()?.manifestSha256 == shipped)
        let exampleC = gateway.providerRecords[id: "example-c"]?.manifestSha256
        let first = gateway.manifestsDigest

        // An edit applied: that provider's digest and the host's change, the other's stays.
        let text = try String(contentsOf: mockURL, encoding: .utf8)
        let edited = text.replacingOccurrences(of: "\"priority\": 1000", with: "\"priority\": 900")
        try #require(edited != text)
        try Data(edited.utf8).write(to: mockURL, options: .atomic)
        #expect(try await gateway.manifests.reload().applied == ["mock.json"])
        let applied = try Self.sha256(mockURL)
        #expect(mock()?.manifestSha256 == applied && applied != shipped)
        #expect(gateway.providerRecords[id: "example-c"]?.manifestSha256 == exampleC)
        let second = gateway.manifestsDigest
        #expect(second != first && second == Self.hostDigest([("example-c", exampleC ?? ""), ("mock", applied)]))

        // A change refused while the last good state stays: the digest is still the one that runs.
        try Data(edited.replacingOccurrences(of: "\"priority\": 900", with: "\"priority\": \"high\"").utf8).write(to: mockURL, options: .atomic)
        let report = try await gateway.manifests.reload()
        #expect(report.refused.map(\.file) == ["mock.json"] && report.refused.first?.keptLastGood == true, "\(report)")
        #expect(mock()?.manifestSha256 == applied && mock()?.state == .loaded)
        #expect(gateway.manifestsDigest == second)

        // A new file refused on its own carries the digest of its bytes, and counts in the host's.
        let broken = try folder.write("broken.json", "not a manifest")
        _ = try await gateway.manifests.reload()
        let brokenDigest = try Self.sha256(broken)
        let refused = try #require(gateway.providerRecords.first { URL(fileURLWithPath: $0.manifestPath).lastPathComponent == "broken.json" })
        #expect(refused.state == .refused && refused.id == nil && refused.manifestSha256 == brokenDigest)
        #expect(gateway.manifestsDigest == Self.hostDigest([("example-c", exampleC ?? ""), ("mock", applied), ("broken.json", brokenDigest)]))
        await gateway.shutdown()
    }
}
