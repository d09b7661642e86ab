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
        var records: [ProviderRecord] = []
        var firstFileByID: [String: String] = [:]
        for url in try ManifestFile.list(in: directory) {
            var record = read(url)
            if let manifest = record.manifest {
                if let first = firstFileByID[manifest.id] {
                    record.failure = .duplicateID(id: manifest.id, firstManifest: first)
                } else {
                    firstFileByID[manifest.id] = url.path
                    record = load(record, manifest: manifest, url: url, loader: loader)
                }
            }
            if let failure = record.failure { loader.logger.warning("refused \(url.path): \(failure)") }
            records.append(record)
        }
        return records
    }

    /// Loads one manifest file on its own (for `gateway plugin check` and the
    /// live reloader), in sandbox mode when `sandbox` is given.
    public static func load(manifestAt url: URL, loader: AdapterLoader, sandbox: SandboxOverlay? = nil) -> ProviderRecord {
        var record = read(url)
        guard var manifest = record.manifest else { return record }
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
        return load(record, manifest: manifest, url: url, loader: loader)
    }

    /// The record of a manifest file as validated, before anything is loaded
    /// (refused, with the reason, when it is not a valid manifest).
    public static func validatedRecord(at url: URL) -> ProviderRecord { read(url) }

    /// The record of a manifest file as validated, before anything is loaded.
    private static func read(_ url: URL) -> ProviderRecord {
        var record = ProviderRecord(manifestPath: url.path, state: .refused, methods: [])
        switch ManifestFile.read(url) {
        case .failure(let failure):
            record.failure = failure
            record.id = bestEffortID(url)
        case .success(let manifest):
            record.id = manifest.id
            record.version = manifest.version
            record.enabled = manifest.enabled
            record.methods = manifest.methods
            record.manifest = manifest
        }
        return record
    }

    private static func load(_ record: ProviderRecord, manifest: Manifest, url: URL, loader: AdapterLoader) -> ProviderRecord {
        var record = record
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
    private static func bestEffortID(_ url: URL) -> String? {
        guard let data = try? Data(contentsOf: url),
              case .object(let root)? = try? JSONDocument.parse(data),
              case .string(let id)? = root["id"] else { return nil }
        return id
    }
}
