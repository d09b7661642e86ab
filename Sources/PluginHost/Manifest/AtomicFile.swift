import Foundation

/// Replaces a file's contents all at once and durably: write a sibling
/// temporary file, flush it to disk (`fsync`), rename it over the original,
/// then flush the directory so the rename itself survives a power cut. A
/// reader sees the old bytes or the new, never half of either; after `write`
/// returns, the new bytes are on disk (as far as the disk honours `fsync`).
///
/// The one way the host writes a file that must not be torn: manifests edited
/// by the CLI and the admin API, the idempotency fingerprint key, API key
/// files.
public enum AtomicFile {
    /// Writes `data` to `url`.
    /// - Parameter permissions: the new file's mode (`0o600` for a secret).
    ///   Nil keeps the mode of the file being replaced, or `0o644` for a new
    ///   one. The mode is set exactly, whatever the process's umask.
    public static func write(_ data: Data, to url: URL, permissions: mode_t? = nil) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let kept = ((try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? NSNumber).map { mode_t($0.intValue) }
        let mode = permissions ?? kept ?? 0o644
        // Created owner-only, then given its mode: a secret is never readable by others, even for a moment.
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { failure = n < 0 ? errno : EIO; break }
                offset += n
            }
        }
        if failure == 0, fchmod(fd, mode) != 0 { failure = errno }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary.path, url.path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary.path)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        try syncDirectory(directory)
    }

    /// Flushes `directory`'s entries (a rename into it) to disk. A file
    /// system that cannot sync a directory (`EINVAL`) has nothing more to do.
    static func syncDirectory(_ directory: URL) throws {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        if fsync(fd) != 0, errno != EINVAL { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
