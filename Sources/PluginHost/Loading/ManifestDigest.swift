import Foundation

/// Which manifests a host runs, as digests ops can compare across hosts
/// (`gateway providers`, `GET /v1/providers`): hosts that applied the same
/// manifest files report the same digests, and a host whose digest differs
/// from the others' has not applied the same manifests (it lags, or refused
/// a change the others took).
public enum ManifestDigest {
    /// The digest of one manifest file: SHA-256 of its bytes exactly as read
    /// from disk (before parsing), lower-case hex. `sha256sum <file>` prints
    /// the same.
    public static func file(_ bytes: Data) -> String {
        LibraryStore.sha256Hex(bytes)
    }

    /// The digest of a host's manifests: SHA-256 (lower-case hex) of the
    /// lines `<id> <manifest sha256>\n`, one per record (the file name when
    /// the record has no id), sorted by their UTF-8 bytes (`LC_ALL=C sort`)
    /// and concatenated. Sorting makes it independent of load order and file
    /// names; a record whose file could not be read (no digest) is left out,
    /// as a running host keeps no record of such a file.
    public static func host(_ records: some Sequence<ProviderRecord>) -> String {
        let lines = records.compactMap { record -> String? in
            guard let digest = record.manifestSha256 else { return nil }
            return "\(record.id ?? URL(fileURLWithPath: record.manifestPath).lastPathComponent) \(digest)\n"
        }
        let sorted = lines.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return LibraryStore.sha256Hex(Data(sorted.joined().utf8))
    }
}
