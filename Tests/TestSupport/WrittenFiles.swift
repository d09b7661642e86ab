import Foundation

/// Every file a gateway wrote under `folder` (its database, the database's
/// write-ahead log, key files, books), with its bytes: what a test searches
/// for a card number that must not be there.
public func writtenFiles(in folder: URL) -> [(url: URL, data: Data)] {
    guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
    return files.compactMap { item in
        guard let url = item as? URL, let data = try? Data(contentsOf: url) else { return nil }
        return (url, data)
    }
}
