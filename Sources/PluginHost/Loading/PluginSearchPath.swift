import Foundation

/// Where a manifest's `library` is looked for. A value with a `/` is a path
/// relative to the manifest's folder (or absolute); a bare file name is looked
/// up in the manifest's folder, then each folder of `$GATEWAY_PLUGIN_PATH`
/// (colon-separated), then the folder of the running executable, so that the
/// libraries a build puts beside `gateway` are found.
public struct PluginSearchPath: Sendable {
    public var extraDirectories: [URL]

    public init(extraDirectories: [URL] = PluginSearchPath.environmentDirectories + [PluginSearchPath.executableDirectory].compactMap { $0 }) {
        self.extraDirectories = extraDirectories
    }

    /// The folders named by `$GATEWAY_PLUGIN_PATH`.
    public static var environmentDirectories: [URL] {
        (ProcessInfo.processInfo.environment["GATEWAY_PLUGIN_PATH"] ?? "")
            .split(separator: ":").map { URL(fileURLWithPath: String($0), isDirectory: true) }
    }

    /// The folder of the running executable.
    public static var executableDirectory: URL? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return Bundle.main.executableURL?.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: path).deletingLastPathComponent()
    }

    /// The file `library` resolves to for a manifest in `manifestDirectory`,
    /// or the list of places searched.
    public func resolve(_ library: String, manifestDirectory: URL) -> Result<URL, LoadFailure> {
        if library.contains("/") {
            let url = library.hasPrefix("/") ? URL(fileURLWithPath: library) : manifestDirectory.appendingPathComponent(library)
            let standardized = url.standardizedFileURL
            return FileManager.default.fileExists(atPath: standardized.path)
                ? .success(standardized) : .failure(.libraryNotFound(library: library, searched: [standardized.path]))
        }
        var searched: [String] = []
        for directory in [manifestDirectory] + extraDirectories {
            let candidate = directory.appendingPathComponent(library).standardizedFileURL
            if searched.contains(candidate.path) { continue }
            searched.append(candidate.path)
            if FileManager.default.fileExists(atPath: candidate.path) { return .success(candidate) }
        }
        return .failure(.libraryNotFound(library: library, searched: searched))
    }
}
