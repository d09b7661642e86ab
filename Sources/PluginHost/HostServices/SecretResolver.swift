import Foundation

/// Resolves an adapter's secrets from the references in its manifest, when the
/// adapter asks: `env:VAR` reads the environment, `file:PATH` reads a file
/// (relative paths from the manifest's folder, one trailing newline dropped).
/// Values are never cached, logged or written anywhere.
struct SecretResolver: Sendable {
    let references: [String: Manifest.SecretReference]
    let manifestDirectory: URL

    /// The secret's bytes, or nil when the manifest does not declare `name` or
    /// its reference resolves to nothing.
    func value(of name: String) -> [UInt8]? {
        guard let reference = references[name] else { return nil }
        switch reference {
        case .environment(let variable):
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
            return Array(value.utf8)
        case .file(let path):
            let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : manifestDirectory.appendingPathComponent(path)
            guard var bytes = FileManager.default.contents(atPath: url.path).map(Array.init) else { return nil }
            if bytes.last == 0x0A { bytes.removeLast() }
            if bytes.last == 0x0D { bytes.removeLast() }
            return bytes.isEmpty ? nil : bytes
        }
    }
}
