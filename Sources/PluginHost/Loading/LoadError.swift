/// Why a manifest's adapter is not loaded. Every case names what was wrong;
/// ``LoadError`` adds the manifest file.
public enum LoadFailure: Error, Sendable, Equatable, Codable, CustomStringConvertible {
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
