import Foundation
import XCTest
@testable import PluginHost

/// The C adapter builds from the header alone with one plain `cc` line, needs
/// no Swift runtime, and loads.
final class ExampleCBuildTests: XCTestCase {
    func testPlainCCBuildLoadsAndNeedsNoSwiftRuntime() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let source = try String(contentsOf: BuildProducts.repository.appendingPathComponent("Plugins/ExampleC/example_c.c"), encoding: .utf8)
        let library = try await CAdapterBuilder.build(source, named: "libExampleCAdapter", in: folder.manifests)
        let needed = try runProcess("/usr/bin/env", ["readelf", "-d", library.path]).output
        XCTAssertFalse(needed.contains("swift"), needed)
        for shipped in [library, BuildProducts.exampleCLibrary] {
            let dynamic = try runProcess("/usr/bin/env", ["readelf", "-d", shipped.path]).output
            XCTAssertFalse(dynamic.lowercased().contains("libswift"), "\(shipped.lastPathComponent): \(dynamic)")
        }
        // A bare library name resolves in the manifest's own folder first.
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", ["library": "libExampleCAdapter.so"])
        let record = ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("example-c.json"), loader: folder.loader)
        let adapter = try XCTUnwrap(record.adapter, "\(String(describing: record.failure))")
        XCTAssertEqual(adapter.librarySHA256, LibraryStore.sha256Hex(try Data(contentsOf: library)))
        await adapter.shutdown()
    }
}
