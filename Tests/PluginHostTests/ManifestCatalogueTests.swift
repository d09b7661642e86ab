import Foundation
@testable import PluginHost
import Testing

/// Every reader of the manifests folder (the host at start, live reload, the
/// CLI's `providers` and its edits, the admin API) goes through one scan and
/// one rule: an id belongs to the first valid manifest naming it, by file name.
@Suite struct ManifestCatalogueTests {
    @Test func theFirstValidManifestByFileNameOwnsItsIdAndLaterOnesAreDuplicates() throws {
        let folder = try ManifestFolder(copyShipped: false)
        try folder.writeVariant(of: "mock.json", as: "b-mock.json", ["version": "2.0.0"])
        try folder.writeVariant(of: "mock.json", as: "c-mock.json", ["version": "3.0.0"])
        try folder.write("a-broken.json", #"{"id": "mock", "version": "#)
        try folder.write("notes.txt", "not a manifest")
        let catalogue = try ManifestCatalogue.scan(folder.manifests)

        #expect(catalogue.entries.map(\.url.lastPathComponent) == ["a-broken.json", "b-mock.json", "c-mock.json"])
        // An invalid file owns nothing, even when it names the id first.
        let owner = try #require(catalogue.owner(of: "mock"))
        #expect(owner.url.lastPathComponent == "b-mock.json" && owner.manifest?.version == "2.0.0")
        let duplicate = catalogue.entries[2]
        #expect(!duplicate.owns && duplicate.duplicateOf == owner.url.path)
        guard case .duplicateID(id: "mock", firstManifest: owner.url.path)? = duplicate.failure else {
            Issue.record("the duplicate's failure is \(String(describing: duplicate.failure))")
            return
        }
        #expect(catalogue.invalid.map(\.file) == ["a-broken.json"])
        #expect(catalogue.owner(of: "nobody") == nil)
        // The entry keeps the bytes it was validated from (what live reload compares).
        #expect(duplicate.bytes == (try Data(contentsOf: duplicate.url)))
    }

    @Test func theRegistryRefusesADuplicateWithoutOpeningItsLibrary() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        try folder.writeVariant(of: "mock.json", as: "a-mock.json", [:])
        // Its library does not exist: opening it would fail with another reason.
        try folder.writeVariant(of: "mock.json", as: "b-mock.json", ["library": "libNowhere.so"])
        let records = try folder.loadAll()
        #expect(records.map(\.state) == [.loaded, .refused])
        guard case .duplicateID(id: "mock", _)? = records[1].failure else {
            Issue.record("b-mock.json was refused as \(String(describing: records[1].failure))")
            return
        }
        for adapter in records.compactMap(\.adapter) { await adapter.shutdown(grace: .milliseconds(10)) }
    }
}
