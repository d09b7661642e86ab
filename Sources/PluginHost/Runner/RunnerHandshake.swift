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
package struct RunnerLoad: Sendable {
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
package struct RunnerReady: Sendable {
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
package struct RunnerLoadFailure: Sendable {
    package var cookie: String
    package var failure: LoadFailure

    package init(cookie: String, failure: LoadFailure) {
        self.cookie = cookie
        self.failure = failure
    }
}

// MARK: The handshake's JSON
//
// The documents are those the Codable conformances wrote before (property
// names, optional members omitted when nil): the wire of runner protocol 3 is
// unchanged. Members a reader does not know are skipped.

extension RunnerProtocol {
    /// The `protocol` member of a handshake document (LOAD, READY), read
    /// before the rest of it: a peer of another runner protocol may send a
    /// document this side cannot read, and both must still hear which
    /// versions met. Nil when the body is not an object with an integer `protocol`.
    package static func version(of document: UnsafeRawBufferPointer) -> Int? {
        var parser = JSONParser(document)
        var spoken: Int?
        do {
            try parser.object { key, p throws(JSONParseError) in
                if key == "protocol", spoken == nil, p.nextIsNumber() {
                    spoken = Int(try p.integer())
                } else {
                    try p.skipValue()
                }
            }
        } catch {
            // Malformed after (or before) `protocol`: what was read stands.
        }
        return spoken
    }
}

/// Readers the handshake documents share.
enum HandshakeJSON {
    /// An integer that `T` holds exactly (an ABI version's UInt32, a pid's or a status's Int32).
    static func integer<T: FixedWidthInteger>(_ p: inout JSONParser, as type: T.Type) throws(JSONParseError) -> T {
        let value = try p.integer()
        guard let exact = T(exactly: value) else { throw p.error("\(value) is out of range") }
        return exact
    }

    /// An array of strings.
    static func strings(_ p: inout JSONParser) throws(JSONParseError) -> [String] {
        var list: [String] = []
        try p.array { p throws(JSONParseError) in list.append(try p.string()) }
        return list
    }
}

extension RunnerLoad: JSONPayload {
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("protocol", self.protocol)
        w.member("expected", expected)
        w.member("library", library)
        w.member("sourcePath", sourcePath)
        w.member("sha256", sha256)
        w.member("config", config)
        w.member("limits", limits)
        w.member("secrets", secrets)
        w.endObject()
    }

    package init(parsing p: inout JSONParser) throws(JSONParseError) {
        var version: Int?, expected: AdapterBinding.Expectation?, library: String?, sourcePath: String?, sha256: String?
        var config: String?, limits: Manifest.Limits?, secrets: [String: String]?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "protocol": version = Int(try p.integer())
            case "expected": expected = try AdapterBinding.Expectation(parsing: &p)
            case "library": library = try p.string()
            case "sourcePath": sourcePath = try p.string()
            case "sha256": sha256 = try p.string()
            case "config": config = try p.string()
            case "limits": limits = try Manifest.Limits(parsing: &p)
            case "secrets":
                var map: [String: String] = [:]
                try p.object { name, p throws(JSONParseError) in map[name] = try p.string() }
                secrets = map
            default: try p.skipValue()
            }
        }
        self.init(
            expected: try required(expected, "expected", p), library: try required(library, "library", p),
            sourcePath: try required(sourcePath, "sourcePath", p), sha256: try required(sha256, "sha256", p),
            config: try required(config, "config", p), limits: try required(limits, "limits", p),
            secrets: try required(secrets, "secrets", p))
        self.protocol = try required(version, "protocol", p)
    }
}

extension RunnerReady: JSONPayload {
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("protocol", self.protocol)
        w.member("cookie", cookie)
        w.member("abiMajor", Int64(abiMajor))
        w.member("abiMinor", Int64(abiMinor))
        w.member("sha256", sha256)
        w.member("description", self.description)
        w.key("sandbox")
        w.beginArray()
        for claim in sandbox { claim.write(to: &w) }
        w.endArray()
        w.member("pid", Int64(pid))
        w.endObject()
    }

    package init(parsing p: inout JSONParser) throws(JSONParseError) {
        var version: Int?, cookie: String?, major: UInt32?, minor: UInt32?, sha256: String?
        var description: AdapterDescription?, sandbox: [SandboxClaim]?, pid: Int32?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "protocol": version = Int(try p.integer())
            case "cookie": cookie = try p.string()
            case "abiMajor": major = try HandshakeJSON.integer(&p, as: UInt32.self)
            case "abiMinor": minor = try HandshakeJSON.integer(&p, as: UInt32.self)
            case "sha256": sha256 = try p.string()
            case "description": description = try AdapterDescription(parsing: &p)
            case "sandbox":
                var claims: [SandboxClaim] = []
                try p.array { p throws(JSONParseError) in claims.append(try SandboxClaim(parsing: &p)) }
                sandbox = claims
            case "pid": pid = try HandshakeJSON.integer(&p, as: Int32.self)
            default: try p.skipValue()
            }
        }
        self.init(
            cookie: try required(cookie, "cookie", p), abiMajor: try required(major, "abiMajor", p), abiMinor: try required(minor, "abiMinor", p),
            sha256: try required(sha256, "sha256", p), description: try required(description, "description", p),
            sandbox: try required(sandbox, "sandbox", p), pid: try required(pid, "pid", p))
        self.protocol = try required(version, "protocol", p)
    }
}

extension RunnerLoadFailure: JSONPayload {
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("cookie", cookie)
        w.member("failure", failure)
        w.endObject()
    }

    package init(parsing p: inout JSONParser) throws(JSONParseError) {
        var cookie: String?, failure: LoadFailure?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "cookie": cookie = try p.string()
            case "failure": failure = try LoadFailure(parsing: &p)
            default: try p.skipValue()
            }
        }
        self.init(cookie: try required(cookie, "cookie", p), failure: try required(failure, "failure", p))
    }
}
