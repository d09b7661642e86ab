import GatewayPayloads
import Foundation

/// Sandbox mode (`gateway serve --sandbox`): each manifest with a `sandbox`
/// block is loaded against the local provider simulators instead of the
/// provider. The manifest file is not changed; the host loads a copy that is
///
/// - enabled, whatever the file says (shipped provider manifests are off);
/// - a test provider, whatever the file says (the shipped ones are live): it
///   talks to simulators, so it must never serve, or back up, a live session;
/// - configured with the block's `config` members in place of `config`'s,
///   `{sandbox}` in their strings replaced by ``baseURL``;
/// - allowed to reach the simulators' loopback address only;
/// - given the simulator's sandbox credentials as its secrets, written under
///   ``secretsDirectory`` (mode 0600) and referenced as `file:`.
///
/// A manifest without a `sandbox` block (the mock, a third party's) is loaded
/// as it is.
public struct SandboxOverlay: Sendable {
    /// The simulators' base URL, `http://127.0.0.1:PORT`.
    public var baseURL: String
    /// Sandbox credentials by provider id, then by the manifest's secret name.
    public var secrets: [String: [String: String]]
    /// Where the credentials' files are written.
    public var secretsDirectory: URL

    public init(baseURL: String, secrets: [String: [String: String]], secretsDirectory: URL) {
        self.baseURL = baseURL
        self.secrets = secrets
        self.secretsDirectory = secretsDirectory
    }

    /// The manifest as sandbox mode loads it.
    public func apply(to manifest: Manifest) throws -> Manifest {
        guard let sandboxConfig = manifest.sandboxConfigJSON else { return manifest }
        guard let url = URL(string: baseURL), let host = url.host, let port = url.port else {
            throw SandboxOverlayError(message: "the sandbox base URL \(baseURL) has no host and port")
        }
        var manifest = manifest
        manifest.enabled = true
        manifest.mode = .test
        manifest.configJSON = try Self.merge(manifest.configJSON, sandboxConfig, baseURL: baseURL)
        manifest.egress = [Manifest.Endpoint(host: host.lowercased(), port: port)]
        for (name, value) in secrets[manifest.id] ?? [:] {
            manifest.secrets[name] = .file(try write(value, provider: manifest.id, name: name).path)
        }
        return manifest
    }

    /// `config` with the sandbox block's members put in.
    static func merge(_ config: String, _ sandbox: String, baseURL: String) throws -> String {
        guard case .object(var merged) = try? JSONValue.parseDocument(Data(config.utf8)),
              case .object(let replacements) = try? JSONValue.parseDocument(Data(sandbox.utf8)) else {
            throw SandboxOverlayError(message: "config and sandbox.config must be JSON objects")
        }
        for (key, value) in replacements { merged[key] = value.replacingSandbox(with: baseURL) }
        return JSONValue.object(merged).serialized
    }

    private func write(_ value: String, provider: String, name: String) throws -> URL {
        let folder = secretsDirectory.appendingPathComponent(provider, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: file.path, contents: Data(value.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw SandboxOverlayError(message: "cannot write the sandbox secret \(name) of \(provider) under \(folder.path)")
        }
        return file
    }
}

/// Why a manifest could not be put in sandbox mode.
public struct SandboxOverlayError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

extension JSONValue {
    /// Every `{sandbox}` in this value's strings replaced by `baseURL`.
    func replacingSandbox(with baseURL: String) -> JSONValue {
        switch self {
        case .string(let s): .string(s.replacingOccurrences(of: "{sandbox}", with: baseURL))
        case .array(let a): .array(a.map { $0.replacingSandbox(with: baseURL) })
        case .object(let o): .object(o.mapValues { $0.replacingSandbox(with: baseURL) })
        default: self
        }
    }
}
