import CheckoutEngine
import Foundation
import GatewayPayloads
import PluginHost

/// One manifest's provider as this host holds it now: what the manifest
/// says, what became of it (loaded, disabled, refused and why), its circuit,
/// its adapter's health and, for an isolated one, its sandbox and runner.
/// The one value `GET /v1/providers`, `/metrics`, `/readyz` and
/// `gateway providers` print, each in its own shape.
public struct ProviderStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        /// Enabled and its adapter loaded.
        case loaded
        /// `"enabled": false` (its adapter may still be loaded for the payments it has).
        case disabled
        /// The manifest or its adapter failed (``failure``).
        case refused
    }

    /// A loaded adapter's health.
    public enum Health: Sendable, Equatable {
        case ready
        /// Its runner ended; a new one is starting (calls are refused meanwhile: nothing is sent).
        case restarting(attempt: Int, reason: String)
        /// Crashed too often: out of routing until ops re-enable it.
        case quarantined(reason: String)
        case closed

        /// `ready`, `restarting`, `quarantined` or `closed`.
        public var name: String {
            switch self {
            case .ready: "ready"
            case .restarting: "restarting"
            case .quarantined: "quarantined"
            case .closed: "closed"
            }
        }
    }

    /// What an isolated adapter's sandbox holds, as the host saw it through /proc.
    public struct Sandbox: Sendable, Equatable {
        public struct Layer: Sendable, Equatable {
            /// `network`, `filesystem`, `pid`, `ipc`, `syscalls`, `landlock`.
            public var layer: String
            public var inForce: Bool
            /// Why not, when not in force.
            public var reason: String?
        }

        public struct Resources: Sendable, Equatable {
            /// The runner's cgroup leaf; nil without one.
            public var cgroup: String?
            public var limits: [String]
            public var reason: String?
        }

        public var layers: [Layer]
        public var resources: Resources?
        public var networkConfined: Bool
        public var networkReason: String?
        /// For people: which layers are in force, which are not and why.
        public var summary: String
    }

    /// Why a manifest or its adapter was refused.
    public struct Failure: Sendable, Equatable {
        /// A stable kind (`open_failed`, `invalid_manifest`, ...; docs/plugin-authors.md).
        public var kind: String
        public var description: String
    }

    public var id: String?
    public var version: String?
    /// As routed (`--sandbox` runs the shipped providers as test); nil for a manifest that is not valid.
    public var mode: PaymentMode?
    public var enabled: Bool?
    public var state: State
    public var failure: Failure?
    public var methods: [String]
    /// The manifest file's full path.
    public var manifestPath: String
    /// SHA-256 of the manifest file's bytes.
    public var manifestSha256: String?
    /// `in-process` or `process`.
    public var isolation: String?
    /// For an adapter in the host's process: why it runs there.
    public var trustedBecause: String?
    /// Its circuit now; nil where no engine routes (`gateway providers` reads the folder alone).
    public var circuit: CircuitBreaker.State?
    /// A loaded adapter's health; nil when none is loaded.
    public var health: Health?
    /// An isolated adapter's sandbox.
    public var sandbox: Sandbox?
    /// An isolated adapter's runner: its process id, how often it ended and was restarted.
    public var runnerPID: Int32?
    public var runnerCrashes: Int?
    public var runnerRestarts: Int?
    /// The host's calls into an in-process adapter that ran past the documented bound.
    public var blockedCalls: Int

    init(_ record: ProviderRecord, circuit: CircuitBreaker.State?) {
        id = record.id
        version = record.version
        mode = record.manifest?.mode
        enabled = record.enabled
        state = State(rawValue: record.state.rawValue) ?? .refused
        failure = record.failure.map { Failure(kind: $0.kind, description: $0.description) }
        methods = record.methods
        manifestPath = record.manifestPath
        manifestSha256 = record.manifestSha256
        isolation = record.manifest?.isolation.rawValue
        if let manifest = record.manifest, manifest.isolation == .inProcess {
            trustedBecause = manifest.isolationByDefault
                ? "by default of file format \(manifest.fileFormatVersion); from file_format_version 1.\(ManifestValidator.processByDefaultFromMinor).0 a manifest that does not say runs in a process of its own"
                : "\"isolation\": \"in-process\""
        }
        self.circuit = record.id == nil ? nil : circuit
        blockedCalls = 0
        guard let adapter = record.adapter else { return }
        health = switch adapter.health {
        case .ready: .ready
        case .restarting(let attempt, let reason): .restarting(attempt: attempt, reason: reason)
        case .quarantined(let reason): .quarantined(reason: reason)
        case .closed: .closed
        }
        blockedCalls = adapter.blockedCalls
        if let report = adapter.sandbox {
            sandbox = Sandbox(
                layers: report.layers.map { Sandbox.Layer(layer: $0.layer.rawValue, inForce: $0.inForce, reason: $0.reason) },
                resources: report.resources.map { Sandbox.Resources(cgroup: $0.cgroup, limits: $0.limits, reason: $0.reason) },
                networkConfined: report.network.confined, networkReason: report.network.reason, summary: report.description)
        }
        if let runner = adapter.runner {
            runnerPID = runner.pid
            runnerCrashes = runner.crashes
            runnerRestarts = runner.restarts
        }
    }
}

/// Every provider this host holds, with the digest of the manifests it applied.
public struct ProviderReport: Sendable, Equatable {
    public var providers: [ProviderStatus]
    /// ``ManifestDigest/host(_:)`` of the same records: two hosts over the same
    /// manifests report the same value, whatever their load order.
    public var manifestsDigest: String

    init(_ records: [ProviderRecord], circuits: [String: CircuitBreaker.State]?) {
        providers = records.map { record in ProviderStatus(record, circuit: circuits.map { $0[record.id ?? ""] ?? .closed }) }
        manifestsDigest = ManifestDigest.host(records)
    }
}
