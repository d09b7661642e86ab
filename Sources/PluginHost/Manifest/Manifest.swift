import Foundation
import GatewayPayloads
import PaymentFields

/// A validated plugin manifest, file format v1: what an adapter is, where its
/// library is, whether it is a test or a live provider, and what it claims to
/// support. See `manifests/schema/`.
///
/// ```json
/// {"file_format_version": "1.1.0", "id": "mock", "version": "1.0.0", "enabled": true, "mode": "test",
///  "library": "libMockAdapter.so", "abi": {"major": 1, "minor": 0},
///  "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
///  "operations": ["authorize", "verify"]}
/// ```
public struct Manifest: Sendable, Hashable {
    /// The default exported symbol (`GW_ADAPTER_ENTRY_SYMBOL`).
    public static let defaultEntry = "gw_adapter_entry"
    /// The default per-call deadline.
    public static let defaultTimeoutMilliseconds = 30_000
    /// `absence_window_s` unless a manifest says: 15 minutes.
    public static let defaultAbsenceWindowSeconds = 900
    /// The default routing priority (lower is tried first).
    public static let defaultPriority = 100

    /// Per-currency amount limits, in minor units, both inclusive.
    public struct AmountLimit: Sendable, Hashable {
        public var min: Int64?
        public var max: Int64?
        public init(min: Int64? = nil, max: Int64? = nil) {
            self.min = min
            self.max = max
        }
    }

    /// Where an adapter runs.
    public enum Isolation: String, Sendable, Hashable {
        case inProcess = "in-process"
        /// A `gateway-runner` process of its own, reached over a socket pair:
        /// a crash costs a restart, not the host.
        case process
    }

    /// An `egress` allowlist entry.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var description: String { "\(host):\(port)" }
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// A `secrets` reference: where a secret's value is read from, never the value.
    public enum SecretReference: Sendable, Hashable, CustomStringConvertible {
        case environment(String)
        case file(String)
        public var description: String {
            switch self {
            case .environment(let name): "env:\(name)"
            case .file(let path): "file:\(path)"
            }
        }
    }

    public var fileFormatVersion: String
    public var id: String
    public var version: String
    public var enabled: Bool
    /// Test or live (`mode`, file format 1.1): it only ever serves sessions of
    /// the same mode. A 1.0 manifest, which cannot say, is live: an unmarked
    /// manifest is never taken for a test one.
    public var mode: PaymentMode
    public var description: String?
    public var library: String
    public var sha256: String?
    public var entry: String
    public var abiMajor: UInt32
    public var abiMinor: UInt32
    public var methods: [String]
    public var currencies: [String]
    public var countries: [String]
    public var amountLimits: [String: AmountLimit]
    public var operations: [PaymentOperation]
    public var priority: Int
    public var timeoutMilliseconds: Int
    /// `absence_window_s`: how long after an attempt starts the provider may
    /// still act on it without having recorded it yet. A verify that finds
    /// nothing (`unknown_payment`) within it keeps the attempt pending;
    /// only after it is absence final. 0 for a provider that can act on
    /// nothing the payer has not completed on a page only the lost answer
    /// carried (a hosted checkout).
    public var absenceWindowSeconds: Int = Manifest.defaultAbsenceWindowSeconds
    /// The `config` object, serialized as JSON, handed to the adapter's `create`.
    public var configJSON: String
    public var secrets: [String: SecretReference]
    public var egress: [Endpoint]
    public var isolation: Isolation
    /// The `sandbox` block's `config`, serialized: the members that replace
    /// `config`'s when the host runs against the provider simulators
    /// (`gateway serve --sandbox`); `{sandbox}` in a string stands for their base URL.
    public var sandboxConfigJSON: String? = nil
    /// The `tls` block: how the host's https egress for this adapter
    /// authenticates itself and the provider; nil for the system defaults.
    public var tls: TLS? = nil
    /// The `limits` block: the runner's resources and supervision (process isolation only).
    public var limits: Limits = Limits()
    /// `isolation_network`: whether a runner gets a network namespace of its
    /// own with no interface but loopback (`none`, the default), or shares the host's.
    public var isolationNetwork: NetworkIsolation = .none
    /// `sandbox_exceptions`: the sandbox layers this adapter's runner runs
    /// without, by the operator's explicit decision (``SandboxLayer``). Any
    /// other layer the kernel refuses keeps the adapter from starting.
    public var sandboxExceptions: [SandboxLayer] = []
    /// Whether `isolation` was left unsaid (and so is its file format's
    /// default: `process` from 1.2, `in-process` before).
    public var isolationByDefault: Bool = false
    /// `fields` (file format 1.1): the form of each method it declares them
    /// for, what a payer types (docs/fields.md).
    public var fields: [String: [Field]] = [:]
    /// `method_currencies` (file format 1.1): methods offered in some of the
    /// manifest's currencies only (`{"sepa_debit": ["EUR"]}`); the others in all.
    public var methodCurrencies: [String: [String]] = [:]
}

/// One layer of an isolated adapter's sandbox (see `gateway-runner` and the
/// plugin guide's "What an isolated adapter may do"). The raw values are what
/// `sandbox_exceptions` lists and what `gateway providers` prints.
public enum SandboxLayer: String, Sendable, Hashable, Codable, CaseIterable {
    /// A network namespace of its own: no interface but a loopback that is down.
    case network
    /// A mount namespace and an empty root: read-only system libraries, a
    /// private bounded `/tmp`, its own `/proc`; nothing of the host's files.
    case filesystem
    /// A PID namespace: no other process visible or signalable, and every
    /// process the adapter starts ends with its runner.
    case pid
    /// IPC and UTS namespaces of its own.
    case ipc
    /// No new privileges and a seccomp-bpf allowlist of system calls.
    case syscalls
    /// Landlock, where the kernel has it: with `filesystem`, only `/tmp`
    /// writable; without the host's network, no TCP; no signal or abstract
    /// socket to a process outside the runner. A kernel without Landlock
    /// leaves it out, which does not keep the adapter from starting.
    case landlock
}

extension Manifest {
    /// `isolation_network`.
    public enum NetworkIsolation: String, Sendable, Hashable, Codable {
        /// No network of its own: everything goes through the host's `http_send`.
        case none
        /// The host's network (for an adapter that must open sockets itself).
        case host
    }

    /// The `limits` block, for `"isolation": "process"`.
    public struct Limits: Sendable, Hashable, Codable {
        public static let defaultCancelGraceMilliseconds = 5_000
        public static let defaultMaxCrashes = 5
        public static let defaultCrashWindowSeconds = 60

        /// `memory_mb`: the runner's data segment (`RLIMIT_DATA`); nil: unlimited.
        public var memoryMegabytes: Int?
        /// `open_files`: `RLIMIT_NOFILE`; nil: inherited.
        public var openFiles: Int?
        /// `cpu_seconds_per_call`: the CPU a runner may use per call it is
        /// given (a budget the host watches); nil: no limit.
        public var cpuSecondsPerCall: Int?
        /// `cancel_grace_ms`: how long a runner may take to complete a call
        /// after the host cancelled it (deadline passed) before it is killed and restarted.
        public var cancelGraceMilliseconds: Int
        /// `max_crashes` within `crash_window_s`: then the provider is quarantined.
        public var maxCrashes: Int
        public var crashWindowSeconds: Int

        public init(memoryMegabytes: Int? = nil, openFiles: Int? = nil, cpuSecondsPerCall: Int? = nil,
                    cancelGraceMilliseconds: Int = defaultCancelGraceMilliseconds,
                    maxCrashes: Int = defaultMaxCrashes, crashWindowSeconds: Int = defaultCrashWindowSeconds) {
            self.memoryMegabytes = memoryMegabytes
            self.openFiles = openFiles
            self.cpuSecondsPerCall = cpuSecondsPerCall
            self.cancelGraceMilliseconds = cancelGraceMilliseconds
            self.maxCrashes = maxCrashes
            self.crashWindowSeconds = crashWindowSeconds
        }
    }
}

extension Manifest {
    /// The `tls` block. Names refer to keys of `secrets`, whose values are PEM.
    public struct TLS: Sendable, Hashable {
        /// The secret holding the client certificate (chain) for mutual TLS.
        public var clientCertificate: String?
        /// The secret holding the client certificate's private key.
        public var clientKey: String?
        /// The secret holding the CA certificate(s) that replace the system roots.
        public var caCertificate: String?
        /// `sha256/<base64>` of acceptable server leaf SubjectPublicKeyInfo DER; empty: no pinning.
        public var pins: [String]

        public init(clientCertificate: String? = nil, clientKey: String? = nil, caCertificate: String? = nil, pins: [String] = []) {
            self.clientCertificate = clientCertificate
            self.clientKey = clientKey
            self.caCertificate = caCertificate
            self.pins = pins
        }
    }
}

extension Manifest.TLS {
    /// The 32 digest bytes of a `sha256/<base64>` pin, or nil when `pin` is not one.
    public static func pinDigest(_ pin: String) -> [UInt8]? {
        guard pin.hasPrefix("sha256/"), let bytes = Data(base64Encoded: String(pin.dropFirst(7))), bytes.count == 32 else { return nil }
        return Array(bytes)
    }
}
