import Foundation

/// Why a provider's manifest could not be edited; nothing was written.
public enum ManifestMemberEditFailure: Error, Sendable {
    /// The folder could not be listed.
    case unreadableFolder(URL, detail: String)
    /// No valid manifest owns the id (with the folder's invalid files, each with why).
    case noSuchProvider(String, folder: URL, invalid: [(file: String, failure: LoadFailure)])
    /// The file could not be read or the member not set (``ManifestEditError``).
    case cannotEdit(URL, detail: String)
    /// The edit would leave the manifest invalid.
    case wouldBeInvalid(URL)
    /// Writing the edited file failed (the old file is intact).
    case writeFailed(URL, detail: String)
}

extension ManifestCatalogue {
    /// Sets one top-level member of the manifest that owns provider `id` in
    /// `folder` to the JSON `literal`, the rest of the file keeping its bytes;
    /// the result is validated and replaces the file by rename (never
    /// half-written). The one way the CLI and the admin API edit manifests.
    /// Returns the file, and whether it changed (it may already say so).
    public static func setMember(_ key: String, to literal: String, ofProvider id: String, in folder: URL)
        throws(ManifestMemberEditFailure) -> (url: URL, changed: Bool) {
        let catalogue: ManifestCatalogue
        do { catalogue = try scan(folder) } catch { throw .unreadableFolder(folder, detail: error.localizedDescription) }
        guard let url = catalogue.owner(of: id)?.url else { throw .noSuchProvider(id, folder: folder, invalid: catalogue.invalid) }
        let original: String
        let edited: String
        do {
            original = try String(contentsOf: url, encoding: .utf8)
            edited = try ManifestEditor.settingTopLevelMember(key, to: literal, in: original)
        } catch {
            throw .cannotEdit(url, detail: "\(error)")
        }
        guard case .valid = ManifestValidator.validate(Data(edited.utf8)) else { throw .wouldBeInvalid(url) }
        guard edited != original else { return (url, false) }
        do { try AtomicFile.write(Data(edited.utf8), to: url) } catch { throw .writeFailed(url, detail: "\(error)") }
        return (url, true)
    }
}
