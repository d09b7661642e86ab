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
        catch { throw ValidationError("cannot read the manifests folder \(directory.path): \(error.localizedDescription)") }
        if let owner = catalogue.owner(of: provider), let manifest = owner.manifest { return (owner.url, manifest) }
        var message = "no valid manifest with id \"\(provider)\" in \(directory.path)"
        let invalid = catalogue.invalid
        if !invalid.isEmpty { message += "\n(invalid manifests there: " + invalid.map { "\($0.file): \($0.failure)" }.joined(separator: "; ") + ")" }
        throw ValidationError(message)
    }

    static func setMember(_ key: String, to literal: String, provider: String, host: HostOptions) throws {
        let (url, _) = try find(provider: provider, host: host)
        let original = try String(contentsOf: url, encoding: .utf8)
        let edited: String
        do { edited = try ManifestEditor.settingTopLevelMember(key, to: literal, in: original) }
        catch { throw ValidationError("\(url.path): \(error)") }
        guard case .valid = ManifestValidator.validate(Data(edited.utf8)) else {
            throw ValidationError("\(url.path): the edited manifest would not be valid; nothing was written")
        }
        if edited == original {
            print("\(provider): \(key) is already \(literal)")
            return
        }
        try AtomicFile.write(Data(edited.utf8), to: url)
        print("\(provider): \(key) set to \(literal) in \(url.path)")
    }
}
