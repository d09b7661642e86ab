import Foundation

/// Builds a Rust adapter crate with cargo, as its README says, for the tests
/// that load it: `Plugins/ExampleRust`, or a skeleton `gateway plugin new
/// --lang rust` wrote. The crate is copied to a temporary folder first (its
/// `target/` and `Cargo.lock` are never written into the repository), built
/// offline (it has no dependencies), and each crate is built once per test
/// process.
public enum RustAdapterBuild {
    /// The cargo to build with: `$CARGO`, else the first on `PATH`, else
    /// rustup's `~/.cargo/bin/cargo`; nil when there is none
    /// (`scripts/install-prerequisites` installs Debian's).
    public static let cargo: URL? = AdapterBuilds.locate(
        "cargo", variable: "CARGO",
        fallbacks: [(ProcessInfo.processInfo.environment["CARGO_HOME"] ?? ((ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.cargo")) + "/bin/cargo"])

    public static var isAvailable: Bool { cargo != nil }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    private static let builds = AdapterBuilds.Once { try await buildNow($0) }

    /// The `cdylib` that `cargo build --release` makes of `crate` (a folder
    /// holding `Cargo.toml`), built in a copy.
    public static func library(of crate: URL) async throws -> URL {
        try await builds.library(of: crate)
    }

    private static func buildNow(_ crate: URL) async throws -> URL {
        guard let cargo else { throw Failed(description: "cargo is not installed (scripts/install-prerequisites installs it)") }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("rust-adapter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: crate.path) where !["target", "Cargo.lock"].contains(name) {
            try FileManager.default.copyItem(at: crate.appendingPathComponent(name), to: copy.appendingPathComponent(name))
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = cargo.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["CARGO_TARGET_DIR"] = copy.appendingPathComponent("target").path
        let built = try await runProcessOffThePool(cargo.path, ["build", "--release", "--offline", "--quiet",
                                                                "--manifest-path", copy.appendingPathComponent("Cargo.toml").path],
                                                   environment: environment)
        guard built.status == 0 else { throw Failed(description: "cargo build --release failed in \(copy.path):\n\(built.output)") }
        let release = copy.appendingPathComponent("target/release")
        let libraries = try FileManager.default.contentsOfDirectory(atPath: release.path).filter { $0.hasPrefix("lib") && $0.hasSuffix(".so") }
        guard libraries.count == 1, let name = libraries.first else {
            throw Failed(description: "cargo build made \(libraries) in \(release.path), not one library")
        }
        return release.appendingPathComponent(name)
    }
}
