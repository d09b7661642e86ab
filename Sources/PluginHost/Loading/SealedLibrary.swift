import CHostSupport
import Foundation
import Synchronization

/// An adapter library's verified bytes in a sealed memfd: what is mapped, in
/// process (`dlopen("/proc/self/fd/N")`) and in a runner (handed over as its
/// fd 4). Sealed against writes, shrinking and growing, it cannot change
/// after the host checked its digest, whatever anything writes to any file
/// afterwards (the content-addressed copy included, which is kept for
/// operators and `gateway providers`, never mapped).
///
/// One per digest for the life of the process: adapters are never
/// `dlclose`d, every gateway in the process that loads the same bytes maps
/// the same copy (as it mapped the same file before), and a descriptor
/// number is never reused (`dlopen` would return the old library for it).
public final class SealedLibrary: Sendable {
    public let fd: Int32
    public let sha256: String

    private init(fd: Int32, sha256: String) {
        self.fd = fd
        self.sha256 = sha256
    }

    /// The sealed copy of `bytes`, whose digest the caller checked to be `sha256`.
    public static func sealing(_ bytes: Data, sha256: String) throws(LoadFailure) -> SealedLibrary {
        let made: Result<SealedLibrary, LoadFailure> = sealed.withLock { sealed in
            if let existing = sealed[sha256] { return .success(existing) }
            let result = bytes.withUnsafeBytes { gw_sealed_library($0.baseAddress, $0.count, "gateway-adapter-\(sha256.prefix(16))") }
            guard result >= 0 else {
                return .failure(.libraryUnreadable(path: sha256, detail: "cannot seal a copy of the library in memory: \(String(cString: strerror(-result)))"))
            }
            let library = SealedLibrary(fd: result, sha256: sha256)
            sealed[sha256] = library
            return .success(library)
        }
        return try made.get()
    }

    private static let sealed = Mutex<[String: SealedLibrary]>([:])

    /// The path that maps it in this process.
    public var path: String { "/proc/self/fd/\(fd)" }

    /// Whether every seal is on (checked before each runner is given it).
    public var isSealed: Bool { gw_library_is_sealed(fd) == 1 }
}

/// What the host process does to itself before it loads anyone's code.
public enum HostHardening {
    /// No core dump, and no process of the same user reads the host's memory
    /// through /proc or ptrace (`PR_SET_DUMPABLE` 0). `gateway serve` calls
    /// it first; an embedding app should too. Returns why not, or nil.
    @discardableResult
    public static func makeNonDumpable() -> String? {
        let result = gw_host_make_non_dumpable()
        return result == 0 ? nil : String(cString: strerror(-result))
    }
}
