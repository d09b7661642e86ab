import GatewayPayloads

/// Why a manifest's adapter is not loaded. Every case names what was wrong;
/// ``LoadError`` adds the manifest file.
public enum LoadFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadableManifest(detail: String)
    case malformedJSON(detail: String)
    case schemaViolation([ManifestProblem])
    case duplicateID(id: String, firstManifest: String)
    /// `"isolation": "process"`, and the `gateway-runner` executable cannot be
    /// found or started.
    case runnerUnavailable(String)
    /// The runner started but the handshake failed (it exited or timed out
    /// before it was ready, or answered with the wrong cookie, digest or protocol).
    case runnerHandshake(String)
    case libraryNotFound(library: String, searched: [String])
    case libraryUnreadable(path: String, detail: String)
    case digestMismatch(path: String, expected: String, actual: String)
    case openFailed(path: String, detail: String)
    case missingSymbol(symbol: String, library: String)
    case abiMismatch(host: String, adapter: String, manifest: String)
    case negotiationFailed(status: ABIStatus)
    case malformedTable(detail: String)
    case missingFunction(name: String)
    case idMismatch(manifest: String, adapter: String)
    case versionMismatch(manifest: String, adapter: String)
    case createFailed(status: ABIStatus, message: String)
    case describeFailed(detail: String)
    case claimsUnimplemented(methods: [String], operations: [String])
    /// Sandbox mode could not set the manifest up against the simulators.
    case sandboxUnavailable(String)
    /// `"isolation": "process"`, and a layer of the runner's sandbox is not in
    /// force (the kernel refused it) while the manifest does not name it in
    /// `sandbox_exceptions`: the adapter is not started (fail closed).
    case sandboxIncomplete(layers: [String], detail: String)
    /// The manifest's `tls` secrets cannot be used (missing, not PEM, a key
    /// that is not the certificate's). Names the secret, never its value.
    case tlsUnusable(String)

    /// A stable, short name for the kind of failure (for `--json` and tests).
    public var kind: String {
        switch self {
        case .unreadableManifest: "unreadable_manifest"
        case .malformedJSON: "malformed_json"
        case .schemaViolation: "schema_violation"
        case .duplicateID: "duplicate_id"
        case .runnerUnavailable: "runner_unavailable"
        case .runnerHandshake: "runner_handshake"
        case .libraryNotFound: "library_not_found"
        case .libraryUnreadable: "library_unreadable"
        case .digestMismatch: "digest_mismatch"
        case .openFailed: "open_failed"
        case .missingSymbol: "missing_symbol"
        case .abiMismatch: "abi_mismatch"
        case .negotiationFailed: "negotiation_failed"
        case .malformedTable: "malformed_table"
        case .missingFunction: "missing_function"
        case .idMismatch: "id_mismatch"
        case .versionMismatch: "version_mismatch"
        case .createFailed: "create_failed"
        case .describeFailed: "describe_failed"
        case .claimsUnimplemented: "claims_unimplemented"
        case .sandboxUnavailable: "sandbox_unavailable"
        case .sandboxIncomplete: "sandbox_incomplete"
        case .tlsUnusable: "tls_unusable"
        }
    }

    public var description: String {
        switch self {
        case .unreadableManifest(let d): "the manifest cannot be read: \(d)"
        case .malformedJSON(let d): "the manifest is not valid JSON: \(d)"
        case .schemaViolation(let problems): "the manifest is invalid: " + problems.map(\.description).joined(separator: "; ")
        case .duplicateID(let id, let first): "id \"\(id)\" is already used by \(first)"
        case .runnerUnavailable(let d): "isolation \"process\": \(d)"
        case .runnerHandshake(let d): "isolation \"process\": the runner did not start the adapter: \(d)"
        case .libraryNotFound(let library, let searched): "library \"\(library)\" not found; searched: \(searched.joined(separator: ", "))"
        case .libraryUnreadable(let path, let d): "library \(path) cannot be read: \(d)"
        case .digestMismatch(let path, let expected, let actual): "sha256 digest mismatch for \(path): manifest pins \(expected), file has \(actual)"
        case .openFailed(let path, let d): "dlopen of \(path) failed: \(d)"
        case .missingSymbol(let symbol, let library): "entry symbol \"\(symbol)\" not found in \(library)"
        case .abiMismatch(let host, let adapter, let manifest): "ABI major version mismatch: host speaks \(host), adapter speaks \(adapter), manifest declares \(manifest)"
        case .negotiationFailed(let s): "the adapter refused ABI negotiation with \(s)"
        case .malformedTable(let d): "the adapter's function table is malformed: \(d)"
        case .missingFunction(let name): "the adapter's function table has no \(name)(), which ABI v1 requires"
        case .idMismatch(let m, let a): "id mismatch: manifest says \"\(m)\", adapter says \"\(a)\""
        case .versionMismatch(let m, let a): "version mismatch: manifest says \"\(m)\", adapter says \"\(a)\""
        case .createFailed(let s, let m): "the adapter's create() failed with \(s): \(m)"
        case .describeFailed(let d): "the adapter's describe() failed: \(d)"
        case .claimsUnimplemented(let methods, let operations):
            "the manifest claims what the adapter does not implement:"
                + (methods.isEmpty ? "" : " methods \(methods.joined(separator: ", "))")
                + (operations.isEmpty ? "" : (methods.isEmpty ? "" : ";") + " operations \(operations.joined(separator: ", "))")
        case .sandboxUnavailable(let d): "sandbox mode: \(d)"
        case .sandboxIncomplete(let layers, let d):
            "isolation \"process\": not started, its sandbox is missing \(layers.map { "\"\($0)\"" }.joined(separator: ", ")): \(d). "
                + "If this adapter may run without \(layers.count == 1 ? "it" : "them"), name \(layers.count == 1 ? "it" : "them") in the manifest: "
                + "\"sandbox_exceptions\": [\(layers.map { "\"\($0)\"" }.joined(separator: ", "))]"
        case .tlsUnusable(let d): "the manifest's tls settings cannot be used: \(d)"
        }
    }
}

/// A runner's LOAD_FAILED carries the failure as Swift's synthesized enum
/// coding wrote it: one member named for the case, whose object holds the
/// associated values by label (`_0` when unlabeled):
/// `{"openFailed":{"path":"…","detail":"…"}}`, `{"runnerHandshake":{"_0":"…"}}`.
extension LoadFailure: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case .unreadableManifest(let detail):
            w.key("unreadableManifest"); w.beginObject()
            w.member("detail", detail)
        case .malformedJSON(let detail):
            w.key("malformedJSON"); w.beginObject()
            w.member("detail", detail)
        case .schemaViolation(let problems):
            w.key("schemaViolation"); w.beginObject()
            w.key("_0")
            w.beginArray()
            for problem in problems { problem.write(to: &w) }
            w.endArray()
        case .duplicateID(let id, let firstManifest):
            w.key("duplicateID"); w.beginObject()
            w.member("id", id)
            w.member("firstManifest", firstManifest)
        case .runnerUnavailable(let detail):
            w.key("runnerUnavailable"); w.beginObject()
            w.member("_0", detail)
        case .runnerHandshake(let detail):
            w.key("runnerHandshake"); w.beginObject()
            w.member("_0", detail)
        case .libraryNotFound(let library, let searched):
            w.key("libraryNotFound"); w.beginObject()
            w.member("library", library)
            Self.writeStrings("searched", searched, to: &w)
        case .libraryUnreadable(let path, let detail):
            w.key("libraryUnreadable"); w.beginObject()
            w.member("path", path)
            w.member("detail", detail)
        case .digestMismatch(let path, let expected, let actual):
            w.key("digestMismatch"); w.beginObject()
            w.member("path", path)
            w.member("expected", expected)
            w.member("actual", actual)
        case .openFailed(let path, let detail):
            w.key("openFailed"); w.beginObject()
            w.member("path", path)
            w.member("detail", detail)
        case .missingSymbol(let symbol, let library):
            w.key("missingSymbol"); w.beginObject()
            w.member("symbol", symbol)
            w.member("library", library)
        case .abiMismatch(let host, let adapter, let manifest):
            w.key("abiMismatch"); w.beginObject()
            w.member("host", host)
            w.member("adapter", adapter)
            w.member("manifest", manifest)
        case .negotiationFailed(let status):
            w.key("negotiationFailed"); w.beginObject()
            w.member("status", status)
        case .malformedTable(let detail):
            w.key("malformedTable"); w.beginObject()
            w.member("detail", detail)
        case .missingFunction(let name):
            w.key("missingFunction"); w.beginObject()
            w.member("name", name)
        case .idMismatch(let manifest, let adapter):
            w.key("idMismatch"); w.beginObject()
            w.member("manifest", manifest)
            w.member("adapter", adapter)
        case .versionMismatch(let manifest, let adapter):
            w.key("versionMismatch"); w.beginObject()
            w.member("manifest", manifest)
            w.member("adapter", adapter)
        case .createFailed(let status, let message):
            w.key("createFailed"); w.beginObject()
            w.member("status", status)
            w.member("message", message)
        case .describeFailed(let detail):
            w.key("describeFailed"); w.beginObject()
            w.member("detail", detail)
        case .claimsUnimplemented(let methods, let operations):
            w.key("claimsUnimplemented"); w.beginObject()
            Self.writeStrings("methods", methods, to: &w)
            Self.writeStrings("operations", operations, to: &w)
        case .sandboxUnavailable(let detail):
            w.key("sandboxUnavailable"); w.beginObject()
            w.member("_0", detail)
        case .sandboxIncomplete(let layers, let detail):
            w.key("sandboxIncomplete"); w.beginObject()
            Self.writeStrings("layers", layers, to: &w)
            w.member("detail", detail)
        case .tlsUnusable(let detail):
            w.key("tlsUnusable"); w.beginObject()
            w.member("_0", detail)
        }
        w.endObject()  // the case's values
        w.endObject()
    }

    private static func writeStrings(_ name: StaticString, _ strings: [String], to w: inout JSONWriter) {
        w.key(name)
        w.beginArray()
        for string in strings { w.string(string) }
        w.endArray()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var failure: LoadFailure?
        try p.object { name, p throws(JSONParseError) in
            guard failure == nil else { throw p.error("a load failure names one case, and this one a second (\"\(name)\")") }
            var values = LoadFailureValues()
            try p.object { key, p throws(JSONParseError) in
                switch key {
                case "status": values.status = try ABIStatus(parsing: &p)
                case "searched", "methods", "operations", "layers": values.lists[key] = try HandshakeJSON.strings(&p)
                case "_0" where name == "schemaViolation":
                    var problems: [ManifestProblem] = []
                    try p.array { p throws(JSONParseError) in problems.append(try ManifestProblem(parsing: &p)) }
                    values.problems = problems
                default:
                    if p.nextIsString() { values.strings[key] = try p.string() } else { try p.skipValue() }
                }
            }
            failure = try values.failure(name, p)
        }
        self = try required(failure, "case", p)
    }
}

/// The associated values of one ``LoadFailure`` case as read, by label.
private struct LoadFailureValues {
    var strings: [String: String] = [:]
    var lists: [String: [String]] = [:]
    var problems: [ManifestProblem]?
    var status: ABIStatus?

    func string(_ label: StaticString, _ p: borrowing JSONParser) throws(JSONParseError) -> String {
        try required(strings[label.description], label, p)
    }

    func list(_ label: StaticString, _ p: borrowing JSONParser) throws(JSONParseError) -> [String] {
        try required(lists[label.description], label, p)
    }

    /// The case named `name`, with these values.
    func failure(_ name: String, _ p: borrowing JSONParser) throws(JSONParseError) -> LoadFailure {
        switch name {
        case "unreadableManifest": return .unreadableManifest(detail: try string("detail", p))
        case "malformedJSON": return .malformedJSON(detail: try string("detail", p))
        case "schemaViolation": return .schemaViolation(try required(problems, "_0", p))
        case "duplicateID": return .duplicateID(id: try string("id", p), firstManifest: try string("firstManifest", p))
        case "runnerUnavailable": return .runnerUnavailable(try string("_0", p))
        case "runnerHandshake": return .runnerHandshake(try string("_0", p))
        case "libraryNotFound": return .libraryNotFound(library: try string("library", p), searched: try list("searched", p))
        case "libraryUnreadable": return .libraryUnreadable(path: try string("path", p), detail: try string("detail", p))
        case "digestMismatch":
            return .digestMismatch(path: try string("path", p), expected: try string("expected", p), actual: try string("actual", p))
        case "openFailed": return .openFailed(path: try string("path", p), detail: try string("detail", p))
        case "missingSymbol": return .missingSymbol(symbol: try string("symbol", p), library: try string("library", p))
        case "abiMismatch": return .abiMismatch(host: try string("host", p), adapter: try string("adapter", p), manifest: try string("manifest", p))
        case "negotiationFailed": return .negotiationFailed(status: try required(status, "status", p))
        case "malformedTable": return .malformedTable(detail: try string("detail", p))
        case "missingFunction": return .missingFunction(name: try string("name", p))
        case "idMismatch": return .idMismatch(manifest: try string("manifest", p), adapter: try string("adapter", p))
        case "versionMismatch": return .versionMismatch(manifest: try string("manifest", p), adapter: try string("adapter", p))
        case "createFailed": return .createFailed(status: try required(status, "status", p), message: try string("message", p))
        case "describeFailed": return .describeFailed(detail: try string("detail", p))
        case "claimsUnimplemented": return .claimsUnimplemented(methods: try list("methods", p), operations: try list("operations", p))
        case "sandboxUnavailable": return .sandboxUnavailable(try string("_0", p))
        case "sandboxIncomplete": return .sandboxIncomplete(layers: try list("layers", p), detail: try string("detail", p))
        case "tlsUnusable": return .tlsUnusable(try string("_0", p))
        default: throw p.error("unknown load failure \"\(name)\"")
        }
    }
}

/// A manifest that was refused, with the file it came from.
public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var manifestPath: String
    public var failure: LoadFailure
    public init(manifestPath: String, failure: LoadFailure) {
        self.manifestPath = manifestPath
        self.failure = failure
    }
    public var description: String { "\(manifestPath): \(failure)" }
}
