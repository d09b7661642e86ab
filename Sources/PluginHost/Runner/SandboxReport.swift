import CHostSupport
import Foundation
import GatewayPayloads

/// Which layers of an isolated adapter's sandbox are in force, as the host
/// saw them through /proc (a runner's own claims are not evidence: the
/// runner's side of the socket is adapter-controlled).
public struct SandboxReport: Codable, Sendable, Hashable, CustomStringConvertible {
    public struct Layer: Codable, Sendable, Hashable {
        public var layer: SandboxLayer
        public var inForce: Bool
        /// Why not, when not in force (the kernel refused it, or the manifest
        /// named it in `sandbox_exceptions`).
        public var reason: String?

        public init(layer: SandboxLayer, inForce: Bool, reason: String?) {
            self.layer = layer
            self.inForce = inForce
            self.reason = reason
        }
    }

    /// What bounds the runner and everything it starts, together (a cgroup
    /// leaf of its own, ``RunnerCgroups``), or why nothing does but rlimits.
    /// Reported, never refused: the syscalls layer keeps an adapter from
    /// starting processes, and `memory_mb` and `open_files` hold as rlimits.
    public struct Resources: Codable, Sendable, Hashable, CustomStringConvertible {
        /// The leaf's path in the cgroup hierarchy; nil without one.
        public var cgroup: String?
        /// The limits the leaf carries (`pids ≤ 1024`, `memory ≤ 128 MiB …`).
        public var limits: [String]
        /// What is missing, and why.
        public var reason: String?

        public init(cgroup: String?, limits: [String], reason: String?) {
            self.cgroup = cgroup
            self.limits = limits
            self.reason = reason
        }

        public var description: String {
            guard let cgroup else { return "no cgroup leaf (\(reason ?? "unknown reason"))" }
            let carried = limits.isEmpty ? "no limits" : limits.joined(separator: ", ")
            return "cgroup leaf \(cgroup) (\(carried)\(reason.map { "; \($0)" } ?? ""))"
        }
    }

    /// Every layer, in ``SandboxLayer/allCases`` order.
    public var layers: [Layer]
    public var resources: Resources?

    public init(layers: [Layer], resources: Resources? = nil) {
        self.layers = layers
        self.resources = resources
    }

    public subscript(_ layer: SandboxLayer) -> Layer {
        layers.first { $0.layer == layer } ?? Layer(layer: layer, inForce: false, reason: "not reported")
    }

    /// The network layer, as the API and `gateway providers` have shown it since 1.0.
    public var network: NetworkConfinement {
        let layer = self[.network]
        return NetworkConfinement(confined: layer.inForce, reason: layer.inForce ? nil : layer.reason)
    }

    /// `network, filesystem, pid, ipc, syscalls, landlock in force`, or which
    /// are not and why; then the resources (`; cgroup leaf …`).
    public var description: String {
        let missing = layers.filter { !$0.inForce }
        let resources = self.resources.map { "; \($0)" } ?? ""
        if missing.isEmpty { return "\(layers.map(\.layer.rawValue).joined(separator: ", ")) in force" + resources }
        let inForce = layers.filter(\.inForce).map(\.layer.rawValue)
        let without = missing.map { "\($0.layer.rawValue) (\($0.reason ?? "unknown reason"))" }.joined(separator: "; ")
        return (inForce.isEmpty ? "" : "\(inForce.joined(separator: ", ")) in force; ") + "without \(without)" + resources
    }
}

extension SandboxLayer {
    /// The Landlock ABI version the kernel here offers; nil without Landlock.
    public static let landlockABI: Int? = {
        let abi = gw_host_landlock_abi()
        return abi > 0 ? Int(abi) : nil
    }()
}

/// What a runner says about its layers in READY (a claim, checked by ``SandboxInspection``).
package struct SandboxClaim: Sendable, Hashable {
    package var layer: String
    package var inForce: Bool
    package var excepted: Bool
    package var reason: String?

    package init(layer: String, inForce: Bool, excepted: Bool, reason: String?) {
        self.layer = layer
        self.inForce = inForce
        self.excepted = excepted
        self.reason = reason
    }
}

/// READY's `sandbox` rows: `reason` omitted when nil.
extension SandboxClaim: JSONPayload {
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("layer", layer)
        w.member("inForce", inForce)
        w.member("excepted", excepted)
        w.member("reason", reason)
        w.endObject()
    }

    package init(parsing p: inout JSONParser) throws(JSONParseError) {
        var layer: String?, inForce: Bool?, excepted: Bool?, reason: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "layer": layer = try p.string()
            case "inForce": inForce = try p.bool()
            case "excepted": excepted = try p.bool()
            case "reason": reason = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self.init(layer: try required(layer, "layer", p), inForce: try required(inForce, "inForce", p),
                  excepted: try required(excepted, "excepted", p), reason: reason)
    }
}

/// Looks at a runner through /proc: which process runs the adapter, and which
/// layers are in force for it.
enum SandboxInspection {
    /// The process that runs the adapter. With a PID namespace the spawned
    /// process is a supervisor whose one child is the namespace's init, whose
    /// one child is the runner; without, the spawned process itself.
    static func adapterProcess(spawned: pid_t) -> pid_t {
        guard let own = namespace("pid", of: spawned), let children = namespace("pid_for_children", of: spawned), own != children,
              let initProcess = Self.children(of: spawned).first,
              let runner = Self.children(of: initProcess).first
        else { return spawned }
        return runner
    }

    /// The layers in force for `adapter` (spawned as `spawned`), each checked
    /// against this process's own: a namespace other than the host's, a root
    /// other than the host's, seccomp filtering with no new privileges.
    static func inspect(adapter: pid_t, claims: [SandboxClaim], exceptions: [SandboxLayer], network: Manifest.NetworkIsolation) -> SandboxReport {
        let hostPID = getpid()
        func differs(_ kind: String) -> Bool {
            guard let mine = namespace(kind, of: hostPID), let theirs = namespace(kind, of: adapter) else { return false }
            return mine != theirs
        }
        var layers: [SandboxReport.Layer] = []
        for layer in SandboxLayer.allCases {
            let seen: Bool
            switch layer {
            case .network: seen = differs("net")
            case .ipc: seen = differs("ipc") && differs("uts")
            case .pid: seen = differs("pid")
            case .filesystem: seen = differs("mnt") && rootDiffers(adapter)
            case .syscalls: seen = filtersSystemCalls(adapter)
            // Not visible through /proc, and the runner's READY comes after
            // the adapter's code ran: seen from what the host knows instead.
            // Where the kernel has Landlock a runner without it never got as
            // far as READY (it refuses before mapping the adapter) unless
            // the manifest excepted it.
            case .landlock: seen = SandboxLayer.landlockABI != nil && !exceptions.contains(.landlock)
            }
            let claim = claims.first { $0.layer == layer.rawValue }
            var reason: String?
            if !seen {
                if exceptions.contains(layer) {
                    reason = "named in the manifest's \"sandbox_exceptions\""
                } else if layer == .network, network == .host {
                    reason = "the manifest asks for the host's network (\"isolation_network\": \"host\")"
                } else if layer == .landlock {
                    reason = "the kernel has no Landlock; the other layers hold without it"
                } else if claim?.inForce == true {
                    reason = "the runner claims it is in force, but /proc shows it is not"
                } else {
                    reason = claim?.reason ?? "the runner did not report it"
                }
            }
            layers.append(.init(layer: layer, inForce: seen, reason: reason))
        }
        return SandboxReport(layers: layers)
    }

    /// The layers not in force that the manifest did not except: the adapter must not run.
    static func missing(_ report: SandboxReport, exceptions: [SandboxLayer], network: Manifest.NetworkIsolation) -> [SandboxReport.Layer] {
        report.layers.filter { layer in
            !layer.inForce && !exceptions.contains(layer.layer) && !(layer.layer == .network && network == .host)
                && !(layer.layer == .landlock && SandboxLayer.landlockABI == nil)
        }
    }

    private static func namespace(_ kind: String, of pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/\(kind)")
    }

    /// `pid`'s children: from /proc/<pid>/task/<pid>/children where the kernel
    /// has it (CONFIG_PROC_CHILDREN), else the processes whose parent it is.
    private static func children(of pid: pid_t) -> [pid_t] {
        if let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) {
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid
        }
    }

    /// Whether `pid`'s root directory is another file system object than ours.
    private static func rootDiffers(_ pid: pid_t) -> Bool {
        var mine = stat(), theirs = stat()
        guard stat("/", &mine) == 0, stat("/proc/\(pid)/root/", &theirs) == 0 else { return false }
        return mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino
    }

    /// `Seccomp: 2` (filter mode) and `NoNewPrivs: 1` in /proc/<pid>/status.
    private static func filtersSystemCalls(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let fields = Dictionary(status.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }, uniquingKeysWith: { first, _ in first })
        return fields["Seccomp"] == "2" && fields["NoNewPrivs"] == "1"
    }
}
