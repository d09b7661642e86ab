import Foundation

/// One scan of a manifests folder: every manifest file, read once, what it
/// says, and which file owns each provider id.
///
/// The rule every reader applies (the host at start, live reload, `gateway
/// providers` and its edits, the admin API): a provider id belongs to the
/// first valid manifest that names it, in file-name order; a later file naming
/// it is a duplicate, refused before its library is ever opened.
public struct ManifestCatalogue: Sendable {
    public struct Entry: Sendable {
        public let url: URL
        /// The file's bytes as read (nil when it could not be read).
        public let bytes: Data?
        public let reading: Result<Manifest, LoadFailure>
        /// The file that owns this entry's id, when it is another (a duplicate).
        public let duplicateOf: String?

        public var manifest: Manifest? { try? reading.get() }

        /// Valid and not a duplicate: the file its id belongs to.
        public var owns: Bool { manifest != nil && duplicateOf == nil }

        /// Why this file is not served by what it says, when it is not:
        /// invalid, or a duplicate.
        public var failure: LoadFailure? {
            switch reading {
            case .failure(let failure): failure
            case .success(let manifest): duplicateOf.map { .duplicateID(id: manifest.id, firstManifest: $0) }
            }
        }
    }

    public let directory: URL
    /// Every manifest file, in file-name order.
    public let entries: [Entry]

    /// Reads every manifest file of `directory`. Throws only when the folder
    /// itself cannot be listed.
    public static func scan(_ directory: URL) throws -> ManifestCatalogue {
        var owner: [String: String] = [:]
        var entries: [Entry] = []
        for url in try ManifestFile.list(in: directory) {
            let bytes: Data?
            let reading: Result<Manifest, LoadFailure>
            do {
                let data = try Data(contentsOf: url)
                bytes = data
                reading = ManifestFile.validate(data)
            } catch {
                bytes = nil
                reading = .failure(.unreadableManifest(detail: error.localizedDescription))
            }
            var duplicateOf: String?
            if case .success(let manifest) = reading {
                if let first = owner[manifest.id] { duplicateOf = first } else { owner[manifest.id] = url.path }
            }
            entries.append(Entry(url: url, bytes: bytes, reading: reading, duplicateOf: duplicateOf))
        }
        return ManifestCatalogue(directory: directory, entries: entries)
    }

    /// The file provider `id` belongs to, if any.
    public func owner(of id: String) -> Entry? {
        entries.first { $0.owns && $0.manifest?.id == id }
    }

    /// The files that are not valid manifests, each with why.
    public var invalid: [(file: String, failure: LoadFailure)] {
        entries.compactMap { entry in
            if case .failure(let failure) = entry.reading { (entry.url.lastPathComponent, failure) } else { nil }
        }
    }
}
