import Foundation

/// Whether this machine's `python3` can import some modules: the clients
/// nobody here wrote that drive the simulators (pinned and installed by
/// `scripts/install-prerequisites`).
public enum PythonModules {
    /// `import <modules>` succeeds.
    public static func importable(_ modules: String) -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import \(modules)"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }
}
