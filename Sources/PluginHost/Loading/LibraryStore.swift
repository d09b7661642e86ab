import Crypto
import Foundation
import GatewayPayloads

/// A content-addressed store of adapter libraries: the bytes whose sha256 the
/// loader checked are written, once, to `<directory>/<sha256>.so`, and that copy
/// is what gets dlopened. Editing or replacing the original file after the check
/// can therefore never change what runs, and an upgrade (new bytes) is a new
/// path that dlopen maps beside the old one.
public struct LibraryStore: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// The digest of `bytes`, lower-case hex.
    public static func sha256Hex(_ bytes: Data) -> String {
        Hex.lowercase(SHA256.hash(data: bytes))
    }

    /// Writes `bytes` (whose digest is `digest`) into the store if absent and
    /// returns the copy's path. An existing copy is re-checked, and replaced if
    /// it no longer has that digest.
    public func copy(_ bytes: Data, digest: String) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("\(digest).so")
        if let existing = FileManager.default.contents(atPath: target.path), Self.sha256Hex(existing) == digest {
            return target
        }
        let temporary = directory.appendingPathComponent(".\(digest).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes, attributes: [.posixPermissions: 0o555]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        if rename(temporary.path, target.path) != 0 {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return target
    }
}
