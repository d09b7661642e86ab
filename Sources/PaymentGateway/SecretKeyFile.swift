import Foundation
import PluginHost

/// A 32-byte secret kept in a file of its own (mode 0600), created on first
/// use: the key of idempotency fingerprints, apart from the database.
///
/// The key is written durably (``AtomicFile``: a temporary file, `fsync`,
/// rename, `fsync` of the folder) before it is used: a fingerprint made with
/// a key that a power cut could take away would make every later retry of
/// its request look like another request.
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
        do {
            try AtomicFile.write(key, to: url, permissions: 0o600)
        } catch {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: error,
                NSLocalizedDescriptionKey: "cannot write the idempotency key file \(url.path): \(error)"])
        }
        return key
    }
}
