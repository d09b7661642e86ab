import Foundation
@_exported import TestSupport
import Logging
import XCTest
@testable import PluginHost

/// Where the build put the products under test (the shipped adapters' libraries
/// and the `gateway` executable): the folder of the running test bundle.
enum BuildProducts {
    static let directory: URL = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent()
    }()

    static var gateway: URL { directory.appendingPathComponent("gateway") }
    static var mockLibrary: URL { directory.appendingPathComponent("libMockAdapter.so") }
    static var exampleCLibrary: URL { directory.appendingPathComponent("libExampleCAdapter.so") }

    /// The repository root (for the shipped manifests and the C header).
    static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    static var shippedManifests: URL { repository.appendingPathComponent("manifests") }
    static var headerDirectory: URL { repository.appendingPathComponent("Sources/CGatewayABI/include") }
}

/// A scratch folder of manifests (copies of the shipped ones, plus whatever a
/// test writes), with its own content-addressed library store.
final class ManifestFolder {
    let root: URL
    let manifests: URL
    let store: URL

    init(copyShipped: Bool = true) throws {
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

    var loader: AdapterLoader {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return AdapterLoader(
            searchPath: PluginSearchPath(extraDirectories: [BuildProducts.directory]),
            store: LibraryStore(directory: store), logger: logger)
    }

    /// Writes `text` as manifest `name`.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> URL {
        let url = manifests.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Writes a manifest built from the shipped `mock.json` with `changes` applied to its top level.
    @discardableResult
    func writeMockVariant(_ name: String, _ changes: [String: Any?]) throws -> URL {
        try writeVariant(of: "mock.json", as: name, changes)
    }

    @discardableResult
    func writeVariant(of shipped: String, as name: String, _ changes: [String: Any?]) throws -> URL {
        let data = try Data(contentsOf: BuildProducts.shippedManifests.appendingPathComponent(shipped))
        var object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        for (key, value) in changes { object[key] = value ?? nil }
        for (key, value) in changes where value == nil { object.removeValue(forKey: key) }
        let out = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        let url = manifests.appendingPathComponent(name)
        try out.write(to: url)
        return url
    }

    func loadAll() throws -> [ProviderRecord] {
        try ProviderRegistry.load(directory: manifests, loader: loader)
    }
}

/// Compiles C adapters written by a test, against the shipped header only.
enum CAdapterBuilder {
    /// Builds `source` into `<directory>/<name>.so` with the plain `cc` line of the docs.
    static func build(_ source: String, named name: String, in directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let sourceURL = directory.appendingPathComponent("\(name).c")
        try Data(source.utf8).write(to: sourceURL)
        let output = directory.appendingPathComponent("\(name).so")
        let result = try runProcess("/usr/bin/env", ["cc", "-std=c99", "-O2", "-shared", "-fPIC", "-pthread",
                                              "-I", BuildProducts.headerDirectory.path, sourceURL.path, "-o", output.path])
        guard result.status == 0 else { throw NSError(domain: "cc", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: result.output]) }
        return output
    }
}

/// What a finished program printed.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
    /// Both streams, for messages that may go to either.
    var output: String { stdout + stderr }
}

/// Runs a program to completion.
@discardableResult
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = try FileHandle(forWritingTo: errorFile)
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errors = (try? Data(contentsOf: errorFile)) ?? Data()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: String(decoding: errors, as: UTF8.self))
}

extension Array where Element == ProviderRecord {
    subscript(id id: String) -> ProviderRecord? { first { $0.id == id } }
}
