import Foundation
import Logging
import PluginHost

/// A scratch folder of manifests (copies of the shipped ones, plus whatever a
/// test writes), with its own content-addressed library store.
public final class ManifestFolder {
    public let root: URL
    public let manifests: URL
    public let store: URL

    public init(copyShipped: Bool = true) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-test-\(UUID().uuidString)")
        manifests = root.appendingPathComponent("manifests")
        store = root.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        if copyShipped {
            for name in ["mock.json", "example-c.json"] {
                try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent(name), to: manifests.appendingPathComponent(name))
            }
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    public var loader: AdapterLoader {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return AdapterLoader(
            searchPath: PluginSearchPath(extraDirectories: [BuildProducts.directory]),
            store: LibraryStore(directory: store), logger: logger)
    }

    /// Writes `text` as manifest `name`.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> URL {
        let url = manifests.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Writes a manifest built from the shipped `mock.json` with `changes` applied to its top level.
    @discardableResult
    public func writeMockVariant(_ name: String, _ changes: [String: Any?]) throws -> URL {
        try writeVariant(of: "mock.json", as: name, changes)
    }

    @discardableResult
    public func writeVariant(of shipped: String, as name: String, _ changes: [String: Any?]) throws -> URL {
        try BuildProducts.writeShippedManifest(shipped, into: manifests, as: name) { manifest in
            for (key, value) in changes { manifest[key] = value }
        }
    }

    public func loadAll() throws -> [ProviderRecord] {
        try ProviderRegistry.load(directory: manifests, loader: loader)
    }
}

/// Compiles C adapters written by a test, against the shipped header only.
public enum CAdapterBuilder {
    /// Builds `source` into `<directory>/<name>.so` with the plain `cc` line of
    /// the docs, on a thread of its own: a compile that blocked a thread of the
    /// concurrency pool (two on this machine) would stall every test running.
    public static func build(_ source: String, named name: String, in directory: URL) async throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let sourceURL = directory.appendingPathComponent("\(name).c")
        try Data(source.utf8).write(to: sourceURL)
        let output = directory.appendingPathComponent("\(name).so")
        let result = try await runProcessOffThePool("/usr/bin/env", ["cc", "-std=c99", "-O2", "-shared", "-fPIC", "-pthread",
                                              "-I", BuildProducts.headerDirectory.path, sourceURL.path, "-o", output.path])
        guard result.status == 0 else { throw NSError(domain: "cc", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: result.output]) }
        return output
    }
}

extension Array where Element == ProviderRecord {
    public subscript(id id: String) -> ProviderRecord? { first { $0.id == id } }
}
