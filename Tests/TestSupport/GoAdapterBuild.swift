import Foundation

/// Builds a Go adapter package with `go build -buildmode=c-shared`, for the
/// tests that load it (`Tests/GoAdapter`). Built once per test process, into
/// a temporary folder (nothing is written into the repository); Go's build
/// cache is its default, and the package has no dependencies to fetch.
public enum GoAdapterBuild {
    /// The go to build with: `$GO`, else the first on `PATH`, else Debian's
    /// `/usr/lib/go/bin/go`; nil when there is none
    /// (`scripts/install-prerequisites` installs Debian's golang-go).
    public static let go: URL? = AdapterBuilds.locate("go", variable: "GO", fallbacks: ["/usr/lib/go/bin/go"])

    public static var isAvailable: Bool { go != nil }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    private static let builds = AdapterBuilds.Once { try await buildNow($0) }

    /// The shared library `go build -buildmode=c-shared` makes of `package`.
    public static func library(of package: URL) async throws -> URL {
        try await builds.library(of: package)
    }

    private static func buildNow(_ package: URL) async throws -> URL {
        guard let go else { throw Failed(description: "go is not installed (scripts/install-prerequisites installs Debian's golang-go)") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("go-adapter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("lib\(package.lastPathComponent).so")
        var environment = ProcessInfo.processInfo.environment
        environment["CGO_ENABLED"] = "1"
        environment["GOFLAGS"] = "-mod=mod -buildvcs=false"
        environment["GOPROXY"] = "off"
        if environment["HOME"] == nil { environment["GOCACHE"] = folder.appendingPathComponent("cache").path }
        // In the package's folder, where its go.mod is (Debian's Go 1.19 has no -C).
        let built = try await runProcessOffThePool("/bin/sh", ["-c", #"cd "$1" && exec "$2" build -buildmode=c-shared -o "$3" ."#, "sh",
                                                               package.path, go.path, output.path], environment: environment)
        guard built.status == 0 else { throw Failed(description: "go build -buildmode=c-shared failed in \(package.path):\n\(built.output)") }
        return output
    }
}
