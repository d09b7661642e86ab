import Foundation

/// What the adapter builds of the tests share (``RustAdapterBuild``,
/// ``GoAdapterBuild``): finding the tool, and building each package once
/// per test process.
enum AdapterBuilds {
    /// The first executable of `$variable`, then `name` on `PATH`, then `fallbacks`.
    static func locate(_ name: String, variable: String, fallbacks: [String]) -> URL? {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit = environment[variable], !explicit.isEmpty { candidates.append(explicit) }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(name)" }
        candidates += fallbacks
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map { URL(fileURLWithPath: $0) }
    }

    /// One build per package folder, shared by every test that asks for it.
    actor Once {
        private var built: [String: Task<URL, any Error>] = [:]
        private let build: @Sendable (URL) async throws -> URL

        init(_ build: @escaping @Sendable (URL) async throws -> URL) {
            self.build = build
        }

        func library(of package: URL) async throws -> URL {
            if let task = built[package.path] { return try await task.value }
            let build = self.build
            let task = Task { try await build(package) }
            built[package.path] = task
            return try await task.value
        }
    }
}
