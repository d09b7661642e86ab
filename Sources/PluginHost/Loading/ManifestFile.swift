import Foundation

/// Reads and validates one manifest file, turning every problem into a ``LoadFailure``.
public enum ManifestFile {
    public static func read(_ url: URL) -> Result<Manifest, LoadFailure> {
        let data: Data
        do { data = try Data(contentsOf: url) }
        catch { return .failure(.unreadableManifest(detail: error.localizedDescription)) }
        return validate(data)
    }

    /// Validates the bytes of a manifest file already read.
    public static func validate(_ data: Data) -> Result<Manifest, LoadFailure> {
        switch ManifestValidator.validate(data) {
        case .valid(let manifest): return .success(manifest)
        case .malformed(let detail): return .failure(.malformedJSON(detail: detail))
        case .invalid(let problems, _): return .failure(.schemaViolation(problems))
        }
    }

    /// The manifest files of a folder: its `*.json` files (not sub-folders), by name.
    public static func list(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
            .filter { $0.pathExtension == "json" && !$0.lastPathComponent.hasPrefix(".") }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
