import GatewayPayloads
import Foundation

/// What became of one manifest.
public struct ProviderRecord: Sendable {
    public enum State: String, Sendable, Codable {
        /// Loaded, negotiated, created and cross-checked: ready to be routed to.
        case loaded
        /// `enabled: false`: its library was never opened.
        case disabled
        /// Something was wrong; ``failure`` says what.
        case refused
    }

    public var manifestPath: String
    /// SHA-256 (lower-case hex, ``ManifestDigest/file(_:)``) of the manifest
    /// file's bytes this record was made from, as read from disk before
    /// parsing. Loaded or disabled: the bytes applied. Refused: the bytes
    /// that were refused, so ops see which version of the file it was. When
    /// a running host refuses a change to a file that was good and keeps its
    /// last good state (``ManifestReloader``), the record in force is the
    /// last good one, digest included: what the host runs. Nil only when the
    /// file could not be read.
    public var manifestSha256: String?
    /// Nil only when the file did not say (not JSON, or no valid `id`).
    public var id: String?
    public var version: String?
    public var enabled: Bool?
    public var state: State
    public var failure: LoadFailure?
    public var methods: [String]
    public var manifest: Manifest?
    public var adapter: AdapterInstance?
}

/// Loads every manifest of a folder. One bad manifest or adapter never stops
/// the others: each becomes a ``ProviderRecord`` with its own state.
public enum ProviderRegistry {
    public static func load(directory: URL, loader: AdapterLoader) throws -> [ProviderRecord] {
        try ManifestCatalogue.scan(directory).entries.map { entry in
            let record = load(entry, loader: loader)
            if let failure = record.failure { loader.logger.warning("refused \(entry.url.path): \(failure)") }
            return record
        }
    }

    /// Loads the manifest of one catalogue entry, as read by the scan (a
    /// duplicate is refused without its library being opened), in sandbox
    /// mode when `sandbox` is given.
    public static func load(_ entry: ManifestCatalogue.Entry, loader: AdapterLoader, sandbox: SandboxOverlay? = nil) -> ProviderRecord {
        let record = record(of: entry)
        guard entry.duplicateOf == nil, let manifest = entry.manifest else { return record }
        return load(record, manifest: manifest, url: entry.url, loader: loader, sandbox: sandbox)
    }

    /// Loads one manifest file on its own (for `gateway plugin check`), in
    /// sandbox mode when `sandbox` is given.
    public static func load(manifestAt url: URL, loader: AdapterLoader, sandbox: SandboxOverlay? = nil) -> ProviderRecord {
        let record = validatedRecord(at: url)
        guard let manifest = record.manifest else { return record }
        return load(record, manifest: manifest, url: url, loader: loader, sandbox: sandbox)
    }

    /// The record of a manifest file as validated, before anything is loaded
    /// (refused, with the reason, when it is not a valid manifest).
    public static func validatedRecord(at url: URL) -> ProviderRecord {
        let bytes = try? Data(contentsOf: url)
        return record(url: url, reading: bytes.map(ManifestFile.validate) ?? ManifestFile.read(url), bytes: bytes)
    }

    /// The record of a catalogue entry before anything is loaded (refused,
    /// with the reason, when it is invalid or a duplicate).
    public static func record(of entry: ManifestCatalogue.Entry) -> ProviderRecord {
        var record = record(url: entry.url, reading: entry.reading, bytes: entry.bytes)
        record.failure = entry.failure
        return record
    }

    private static func record(url: URL, reading: Result<Manifest, LoadFailure>, bytes: Data?) -> ProviderRecord {
        var record = ProviderRecord(manifestPath: url.path, state: .refused, methods: [])
        record.manifestSha256 = bytes.map(ManifestDigest.file)
        switch reading {
        case .failure(let failure):
            record.failure = failure
            record.id = bytes.flatMap(bestEffortID)
        case .success(let manifest):
            record.id = manifest.id
            record.version = manifest.version
            record.enabled = manifest.enabled
            record.methods = manifest.methods
            record.manifest = manifest
        }
        return record
    }

    private static func load(_ record: ProviderRecord, manifest: Manifest, url: URL, loader: AdapterLoader,
                             sandbox: SandboxOverlay?) -> ProviderRecord {
        var record = record
        var manifest = manifest
        if let sandbox {
            do {
                manifest = try sandbox.apply(to: manifest)
            } catch {
                record.failure = .sandboxUnavailable("\(error)")
                return record
            }
            record.enabled = manifest.enabled
            record.manifest = manifest
        }
        guard manifest.enabled else {
            record.state = .disabled
            return record
        }
        switch loader.load(manifest, from: url) {
        case .success(let adapter):
            record.state = .loaded
            record.adapter = adapter
        case .failure(let failure):
            record.failure = failure
        }
        return record
    }

    /// The `id` of a manifest that failed validation, when it has a usable one.
    private static func bestEffortID(_ data: Data) -> String? {
        guard case .object(let root)? = try? JSONValue.parseDocument(data),
              case .string(let id)? = root["id"] else { return nil }
        return id
    }
}
