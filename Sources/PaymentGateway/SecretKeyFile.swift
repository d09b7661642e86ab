import Foundation

/// A 32-byte secret kept in a file of its own (mode 0600), created on first
/// use: the key of idempotency fingerprints, apart from the database.
enum SecretKeyFile {
    static func load(_ url: URL) throws -> Data {
        if let existing = FileManager.default.contents(atPath: url.path) {
            guard existing.count == 32 else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: url.path,
                    NSLocalizedDescriptionKey: "\(url.path) must hold exactly 32 bytes (it holds \(existing.count)); restore it or remove it to start afresh"])
            }
            return existing
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let temporary = url.path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: key, attributes: [.posixPermissions: 0o600]),
              rename(temporary, url.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        return key
    }
}
