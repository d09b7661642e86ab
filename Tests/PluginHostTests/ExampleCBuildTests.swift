import Foundation
@testable import PluginHost
import Testing
import TestSupport

/// The C adapter builds from the header alone with one plain `cc` line, needs
/// no Swift runtime, and loads.
@Suite(.heavy) struct ExampleCBuildTests {
    @Test func plainCCBuildLoadsAndNeedsNoSwiftRuntime() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        let source = try String(contentsOf: BuildProducts.repository.appendingPathComponent("Plugins/ExampleC/example_c.c"), encoding: .utf8)
        let library = try await CAdapterBuilder.build(source, named: "libExampleCAdapter", in: folder.manifests)
        let needed = try await runProcessOffThePool("/usr/bin/env", ["readelf", "-d", library.path]).output
        #expect(!needed.contains("swift"), "\(needed)")
        for shipped in [library, BuildProducts.exampleCLibrary] {
            let dynamic = try await runProcessOffThePool("/usr/bin/env", ["readelf", "-d", shipped.path]).output
            #expect(!dynamic.lowercased().contains("libswift"), "\(shipped.lastPathComponent): \(dynamic)")
        }
        // A bare library name resolves in the manifest's own folder first.
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", ["library": "libExampleCAdapter.so"])
        // Read before loading: nothing that can throw comes between the load and the shutdown.
        let digest = LibraryStore.sha256Hex(try Data(contentsOf: library))
        let record = ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("example-c.json"), loader: folder.loader)
        let adapter = try #require(record.adapter, "\(String(describing: record.failure))")
        #expect(adapter.librarySHA256 == digest)
        await adapter.shutdown()
    }
}
