import ArgumentParser
import Foundation
import PluginHost

/// Edits one top-level member of a provider's manifest in place: the rest of
/// the file keeps its bytes, the result is validated, and it replaces the old
/// file by rename (never half-written).
enum ManifestEdits {
    /// The manifest file whose `id` is `provider`.
    static func find(provider: String, host: HostOptions) throws -> (URL, Manifest) {
        let directory = HostSetup.manifestsURL(host)
        let catalogue: ManifestCatalogue
        do { catalogue = try ManifestCatalogue.scan(directory) }
        catch { throw ValidationError(message(.unreadableFolder(directory, detail: error.localizedDescription))) }
        if let owner = catalogue.owner(of: provider), let manifest = owner.manifest { return (owner.url, manifest) }
        throw ValidationError(message(.noSuchProvider(provider, folder: directory, invalid: catalogue.invalid)))
    }

    static func setMember(_ key: String, to literal: String, provider: String, host: HostOptions) throws {
        let edit: (url: URL, changed: Bool)
        do {
            edit = try ManifestCatalogue.setMember(key, to: literal, ofProvider: provider, in: HostSetup.manifestsURL(host))
        } catch {
            throw ValidationError(message(error))
        }
        print(edit.changed ? "\(provider): \(key) set to \(literal) in \(edit.url.path)" : "\(provider): \(key) is already \(literal)")
    }

    /// What the CLI says of an edit that could not be made.
    static func message(_ failure: ManifestMemberEditFailure) -> String {
        switch failure {
        case .unreadableFolder(let folder, let detail):
            return "cannot read the manifests folder \(folder.path): \(detail)"
        case .noSuchProvider(let id, let folder, let invalid):
            var message = "no valid manifest with id \"\(id)\" in \(folder.path)"
            if !invalid.isEmpty { message += "\n(invalid manifests there: " + invalid.map { "\($0.file): \($0.failure)" }.joined(separator: "; ") + ")" }
            return message
        case .cannotEdit(let url, let detail), .writeFailed(let url, let detail):
            return "\(url.path): \(detail)"
        case .wouldBeInvalid(let url):
            return "\(url.path): the edited manifest would not be valid; nothing was written"
        }
    }
}
