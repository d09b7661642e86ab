import Foundation
import PluginHost

/// Where the build put the products under test (the shipped adapters' libraries
/// and the `gateway` executable): the folder of the running test bundle.
public enum BuildProducts {
    public static let directory: URL = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent()
    }()

    public static var gateway: URL { directory.appendingPathComponent("gateway") }
    public static var mockLibrary: URL { directory.appendingPathComponent("libMockAdapter.so") }
    public static var exampleCLibrary: URL { directory.appendingPathComponent("libExampleCAdapter.so") }
    /// One library store for the gateways the tests start (copies are named by
    /// digest, so sharing is safe): each test then reads its adapters' copies
    /// instead of writing tens of megabytes of debug libraries again.
    public static var sharedLibraryStore: URL { directory.appendingPathComponent("test-library-store") }

    /// The repository root (for the shipped manifests and the C header).
    public static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The shipped manifests. Under `GATEWAY_TEST_ISOLATION=process` (README),
    /// a copy whose mock says `"isolation": "process"`: every test that pays
    /// through the mock's shipped manifest then pays through `gateway-runner`.
    public static let shippedManifests: URL = {
        let shipped = repository.appendingPathComponent("manifests")
        guard isolation == "process" else { return shipped }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-test-manifests-\(getpid())")
        try? FileManager.default.removeItem(at: copy)
        do {
            try FileManager.default.copyItem(at: shipped, to: copy)
            // A textual edit: tests that edit the copy find the shipped layout.
            // The mock simulates a provider whose books outlive the host
            // (`gateway pay`'s reconciliation after a crash reads them): it
            // keeps them in the data folder, which the filesystem layer hides,
            // so this copy names that one exception.
            try ManifestText.setIsolation(copy.appendingPathComponent("mock.json"), to: "process",
                                          extraMembers: #", "sandbox_exceptions": ["filesystem"]"#)
        } catch {
            fatalError("GATEWAY_TEST_ISOLATION=process: cannot prepare the manifests: \(error)")
        }
        return copy
    }()

    /// `GATEWAY_TEST_ISOLATION`: where the shipped mock runs in this test run.
    public static let isolation = ProcessInfo.processInfo.environment["GATEWAY_TEST_ISOLATION"] ?? "in-process"
    public static var headerDirectory: URL { repository.appendingPathComponent("Sources/CGatewayABI/include") }

    /// Writes the shipped manifest `name` into `folder` as `newName` (by
    /// default its own name), changed by `edit`; returns the written file.
    @discardableResult
    public static func writeShippedManifest(_ name: String, into folder: URL, as newName: String? = nil,
                                            _ edit: (inout [String: Any]) throws -> Void = { _ in }) throws -> URL {
        let data = try Data(contentsOf: shippedManifests.appendingPathComponent(name))
        guard var manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: name])
        }
        try edit(&manifest)
        // `sandbox_exceptions` apply with process isolation only (the copy
        // under GATEWAY_TEST_ISOLATION=process carries them for the mock),
        // said or, from file format 1.2, by default.
        let format = (manifest["file_format_version"] as? String ?? "").split(separator: ".").map { Int($0) ?? 0 }
        let isolated = manifest["isolation"] as? String == "process"
            || (manifest["isolation"] == nil && format.count > 1 && (format[0], format[1]) >= (1, ManifestValidator.processByDefaultFromMinor))
        if !isolated { manifest.removeValue(forKey: "sandbox_exceptions") }
        let url = folder.appendingPathComponent(newName ?? name)
        try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys]).write(to: url)
        return url
    }
}


/// What a finished program printed.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Both streams, for messages that may go to either.
    public var output: String { stdout + stderr }
}

/// Runs a program to completion (see ``ChildProcess`` for why not `Process`).
@discardableResult
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let output = try ScratchFile(), errors = try ScratchFile()
    let child: ChildProcess
    do {
        child = try ChildProcess(executable, arguments, environment: environment,
                                 standardOutput: output.descriptor, standardError: errors.descriptor)
    } catch {
        _ = output.closeAndRead(); _ = errors.closeAndRead()
        throw error
    }
    let status: Int32 = switch child.waitForExit() {
    case .exited(let code): code
    case .signalled(let signal): signal
    }
    return ProcessResult(status: status, stdout: output.closeAndRead(), stderr: errors.closeAndRead())
}


/// Runs a program to completion on a thread of its own, so that waiting for it
/// never holds one of the few threads Swift concurrency runs every test on
/// (two on this machine): the other tests' servers and clients keep going.
public func runProcessOffThePool(_ executable: String, _ arguments: [String],
                                 environment: [String: String]? = nil) async throws -> ProcessResult {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try runProcess(executable, arguments, environment: environment) })
        }
        thread.start()
    }
}
