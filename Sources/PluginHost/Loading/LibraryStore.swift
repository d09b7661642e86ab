import Crypto
import Foundation
import Synchronization
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
    /// it no longer has that digest. A copy this process already checked or
    /// wrote is not read again while its file identity (device, inode, size,
    /// change time) is unchanged: a reload of an unchanged adapter, or another
    /// host in the process sharing the store, costs one `stat`.
    public func copy(_ bytes: Data, digest: String) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("\(digest).so")
        if let identity = FileIdentity(path: target.path), Self.checked.withLock({ $0[target.path] == identity }) {
            return target
        }
        if let existing = FileManager.default.contents(atPath: target.path), Self.sha256Hex(existing) == digest {
            Self.remember(target)
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
        Self.remember(target)
        return target
    }

    /// The copies whose digest this process has checked, with their identity then.
    private static let checked = Mutex<[String: FileIdentity]>([:])

    private static func remember(_ copy: URL) {
        guard let identity = FileIdentity(path: copy.path) else { return }
        checked.withLock { $0[copy.path] = identity }
    }
}

/// What changes when a file is replaced or rewritten: device, inode, size and
/// status-change time (which a write, chmod or rename updates, and which no
/// unprivileged call can set back).
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var changedSeconds: Int
    var changedNanoseconds: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        changedSeconds = info.st_ctim.tv_sec
        changedNanoseconds = info.st_ctim.tv_nsec
    }
}
