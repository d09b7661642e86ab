import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child program started with `posix_spawn`, for tests.
///
/// Not Foundation's `Process`: on Linux its `run()` (swift-corelibs-foundation
/// as shipped with Swift 6.3.1) reads each `/proc/self/fd` entry's whole
/// 256-byte `d_name` while counting open descriptors, past the end of what
/// `readdir` returned, and crashes the test process when that record ends a
/// mapped page (swiftlang/swift-corelibs-foundation#5472). A test process with
/// hundreds of sockets open hit it about one run in three.
///
/// The child's standard input is `/dev/null`; its output and errors go to the
/// descriptors given. ``runProcess(_:_:environment:)`` hands it files, not
/// pipes, so a descriptor another child inherits by accident can never keep a
/// read waiting for an end of file.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t

    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                standardOutput: Int32, standardError: Int32) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        // Nothing else of the test process's: a descriptor a child inherits by
        // accident can keep another's read waiting, or an executable busy.
        _ = Self.addCloseFrom?(&actions, 3)

        let variables = environment.map { ProcessInfo.processInfo.environment.merging($0) { $1 } } ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, envp)
        guard code == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(code),
                          userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable): \(String(cString: strerror(code)))"])
        }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later;
    /// Swift's Glibc module does not declare it), found at run time.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            .map { unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self) }
    }()

    /// Blocks until the child ends.
    public func waitForExit() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        kill(pid, signal)
    }
}

/// A scratch file opened for writing (close-on-exec), removed on `close()`.
struct ScratchFile {
    let path: String
    let descriptor: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        descriptor = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    /// Closes the file and returns what was written to it.
    func closeAndRead() -> String {
        Glibc.close(descriptor)
        defer { unlink(path) }
        return String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}
