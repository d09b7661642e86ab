import Foundation
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// A second manifest with an id already taken is refused as a duplicate
/// before anything of it is loaded, at start and on every reload: its
/// library is never opened (the reloader used to load and create it, then
/// drop it unshut), so a duplicate naming a library that does not exist is
/// a `duplicate_id`, never a `library_not_found`.
@Suite struct DuplicateManifestTests {
    @Test func aDuplicateIdIsRefusedBeforeItsLibraryIsOpened() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("duplicate-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"),
                                         to: manifests.appendingPathComponent("mock.json"))
        let mock = try String(contentsOf: manifests.appendingPathComponent("mock.json"), encoding: .utf8)
        let duplicate = mock.replacingOccurrences(of: "libMockAdapter.so", with: "libNoSuchAdapter.so")
        #expect(duplicate != mock)
        try Data(duplicate.utf8).write(to: manifests.appendingPathComponent("zz-mock-again.json"))

        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        let gateway = try await PaymentGateway.open(configuration: configuration)
        func record(_ file: String) -> ProviderRecord? {
            gateway.providerRecords.first { URL(fileURLWithPath: $0.manifestPath).lastPathComponent == file }
        }
        #expect(record("mock.json")?.state == .loaded)
        let refused = try #require(record("zz-mock-again.json"))
        #expect(refused.state == .refused && refused.adapter == nil)
        guard case .duplicateID(let id, let first)? = refused.failure else {
            Issue.record("refused for another reason: \(String(describing: refused.failure))")
            return
        }
        #expect(id == "mock" && URL(fileURLWithPath: first).lastPathComponent == "mock.json")

        // Edited while running: still a duplicate, reported as one, and mock keeps serving.
        try Data((duplicate + "\n").utf8).write(to: manifests.appendingPathComponent("zz-mock-again.json"))
        let report = try await gateway.manifests.reload()
        #expect(report.refused.map(\.file) == ["zz-mock-again.json"] && report.refused.first?.reason.contains("already used") == true,
                "\(report.refused)")
        #expect(record("mock.json")?.state == .loaded && record("mock.json")?.adapter != nil)
        await gateway.shutdown()
    }
}
