import Foundation
import GatewayPayloads

/// The runner protocol version: which frames and handshake documents both
/// sides speak (not the adapter ABI version, which the runner negotiates with
/// the library exactly as the host does in process).
package enum RunnerProtocol {
    /// 2: the library is the runner's fd 4 (a sealed memfd), and READY
    /// reports every sandbox layer (``SandboxClaim``).
    package static let version = 3
    /// The sealed library the host hands over.
    package static let libraryFD: Int32 = 4
    /// The runner's end of the socket pair.
    package static let channelFD: Int32 = 3
    /// Environment of a runner: set by the host, nothing else inherited but the whitelist.
    package static let cookieVariable = "GATEWAY_RUNNER_COOKIE"
    package static let hostPIDVariable = "GATEWAY_HOST_PID"
    package static let networkVariable = "GATEWAY_RUNNER_NETWORK"
    /// The manifest's `sandbox_exceptions`, comma-separated.
    package static let exceptionsVariable = "GATEWAY_RUNNER_EXCEPTIONS"
    /// Layers whose refusal by the kernel the runner simulates
    /// (``AdapterLoader/simulatedSandboxRefusals``).
    package static let simulateVariable = "GATEWAY_RUNNER_SIMULATE_REFUSAL"
    /// The size of the runner's private /tmp, in MiB.
    package static let tmpVariable = "GATEWAY_RUNNER_TMP_MB"
    /// Set when the runner has a cgroup leaf: fd 5 is its `cgroup.procs`,
    /// which the runner joins before anything else (``RunnerCgroups``).
    package static let cgroupVariable = "GATEWAY_RUNNER_CGROUP_FD"
    package static let cgroupFD: Int32 = 5
}

/// LOAD: what the host asks a runner to load.
package struct RunnerLoad: Codable, Sendable {
    package var `protocol`: Int
    package var expected: AdapterBinding.Expectation
    /// The content-addressed copy the host wrote (for messages: the runner
    /// maps its fd 4, the sealed copy of the same bytes), and its sha256.
    package var library: String
    package var sourcePath: String
    package var sha256: String
    package var config: String
    package var limits: Manifest.Limits
    /// The secrets the runner answers `secret_get` with from its memory, by
    /// name (base64 values): those of the adapter's manifest that resolve to
    /// a value, resolved when this runner starts (``HostContext/runnerSecrets()``).
    package var secrets: [String: String]

    package init(expected: AdapterBinding.Expectation, library: String, sourcePath: String, sha256: String, config: String, limits: Manifest.Limits,
                 secrets: [String: String] = [:]) {
        self.protocol = RunnerProtocol.version
        self.expected = expected
        self.library = library
        self.sourcePath = sourcePath
        self.sha256 = sha256
        self.config = config
        self.limits = limits
        self.secrets = secrets
    }
}

/// Whether a runner has no network of its own, and if not, why.
public struct NetworkConfinement: Codable, Sendable, Hashable, CustomStringConvertible {
    /// True: a network namespace of its own (loopback only, down).
    public var confined: Bool
    /// Why not (the manifest asked for the host's network, or the kernel refused).
    public var reason: String?

    public init(confined: Bool, reason: String?) {
        self.confined = confined
        self.reason = reason
    }

    public var description: String { confined ? "confined" : "not confined: \(reason ?? "unknown reason")" }
}

/// READY: the runner loaded the adapter.
package struct RunnerReady: Codable, Sendable {
    package var `protocol`: Int
    package var cookie: String
    package var abiMajor: UInt32
    package var abiMinor: UInt32
    /// The sha256 of the bytes the runner mapped: the host's sealed copy, whose
    /// seals the runner checked before mapping it (a claim, as all of READY is:
    /// the host checked the seals itself before the spawn).
    package var sha256: String
    /// What the adapter's `describe` said (the host cross-checks it with the manifest).
    package var description: AdapterDescription
    /// What the runner says of each layer (claims; the host looks for itself).
    package var sandbox: [SandboxClaim]
    package var pid: Int32

    package init(cookie: String, abiMajor: UInt32, abiMinor: UInt32, sha256: String, description: AdapterDescription, sandbox: [SandboxClaim], pid: Int32) {
        self.protocol = RunnerProtocol.version
        self.cookie = cookie
        self.abiMajor = abiMajor
        self.abiMinor = abiMinor
        self.sha256 = sha256
        self.description = description
        self.sandbox = sandbox
        self.pid = pid
    }
}

/// LOAD_FAILED: the runner could not load the adapter; the same failure the
/// host reports in process.
package struct RunnerLoadFailure: Codable, Sendable {
    package var cookie: String
    package var failure: LoadFailure

    package init(cookie: String, failure: LoadFailure) {
        self.cookie = cookie
        self.failure = failure
    }
}
