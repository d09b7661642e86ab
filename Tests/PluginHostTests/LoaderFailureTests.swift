import Foundation
@testable import PluginHost
import Testing
import TestSupport

/// Every way a manifest or adapter can be refused: each test builds or
/// fabricates the bad case beside the two good shipped adapters, asserts the
/// typed failure, and asserts that the good adapters still load.
@Suite struct LoaderFailureTests {
    /// Loads `folder`'s manifests and runs `body` with their records, then shuts
    /// every loaded adapter down, whether `body` returned, failed an
    /// expectation or threw.
    private func withRecords(_ folder: ManifestFolder, _ body: ([ProviderRecord]) async throws -> Void) async throws {
        let records = try folder.loadAll()
        do {
            try await body(records)
        } catch {
            await shutDown(records)
            throw error
        }
        await shutDown(records)
    }

    private func shutDown(_ records: [ProviderRecord]) async {
        for record in records { await record.adapter?.shutdown(grace: .seconds(1).scaled) }
    }

    private func assertRefused(
        _ folder: ManifestFolder, manifest name: String, expectExampleC: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ check: (LoadFailure) -> Bool
    ) async throws {
        try await withRecords(folder) { records in
            let bad = try #require(records.first { $0.manifestPath.hasSuffix("/" + name) }, "no record for \(name)", sourceLocation: sourceLocation)
            #expect(bad.state == .refused, "\(name) should be refused", sourceLocation: sourceLocation)
            let failure = try #require(bad.failure, sourceLocation: sourceLocation)
            #expect(check(failure), "unexpected failure: \(failure)", sourceLocation: sourceLocation)
            #expect(!failure.description.isEmpty, sourceLocation: sourceLocation)
            #expect(records[id: "mock"]?.state == .loaded, "mock must still load: \(String(describing: records[id: "mock"]?.failure))",
                    sourceLocation: sourceLocation)
            if expectExampleC {
                #expect(records[id: "example-c"]?.state == .loaded, "example-c must still load", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func malformedJSONIsRefusedWithItsPosition() async throws {
        let folder = try ManifestFolder()
        try folder.write("broken.json", "{\n  \"id\": \"broken\",\n  \"enabled\": tru\n}")
        try await assertRefused(folder, manifest: "broken.json") {
            if case .malformedJSON(let detail) = $0 { return !detail.isEmpty }
            return false
        }
    }

    @Test func schemaViolationsAreAllReportedWithTheirPaths() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("bad.json", [
            "id": "bad", "enabled": "yes", "methods": [], "amount": ["SAR": ["min": 500, "max": 10]],
            "secrets": ["api_key": "sk_live_123"], "priority": -1, "surprise": 1,
        ])
        try await assertRefused(folder, manifest: "bad.json") { failure in
            guard case .schemaViolation(let problems) = failure else { return false }
            let paths = Set(problems.map(\.path))
            let expected: Set = ["$.enabled", "$.methods", "$.amount.SAR.min", "$.secrets.api_key", "$.priority", "$.surprise"]
            #expect(expected.isSubset(of: paths), "paths: \(paths)")
            // A secret pasted as a value is never echoed back.
            #expect(!failure.description.contains("sk_live_123"))
            return true
        }
    }

    @Test func anUnusableTLSSecretRefusesTheAdapterNamingTheSecretNotItsValue() async throws {
        let folder = try ManifestFolder()
        let certificate = folder.root.appendingPathComponent("client.pem")
        try FileManager.default.createDirectory(at: folder.root, withIntermediateDirectories: true)
        try Data("not-a-certificate-5f2e".utf8).write(to: certificate)
        try folder.writeMockVariant("mock.json", [
            "secrets": ["webhook_secret": "env:GATEWAY_MOCK_WEBHOOK_SECRET", "client_cert": "file:\(certificate.path)"],
            "tls": ["ca_certificate": "client_cert"],
        ])
        try await withRecords(folder) { records in
            let mock = try #require(records[id: "mock"])
            #expect(mock.state == .refused)
            let failure = try #require(mock.failure)
            #expect(failure.kind == "tls_unusable")
            #expect(failure.description.contains(#"tls.ca_certificate: secret "client_cert" is not a PEM certificate"#), "\(failure.description)")
            #expect(!failure.description.contains("not-a-certificate-5f2e"))
            #expect(records[id: "example-c"]?.state == .loaded, "the other adapter still loads")
        }
    }

    @Test func missingLibraryNamesWhereItLooked() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("ghost.json", ["id": "ghost", "library": "libGhost.so"])
        try await assertRefused(folder, manifest: "ghost.json") {
            if case .libraryNotFound(let library, let searched) = $0 { return library == "libGhost.so" && searched.count >= 2 }
            return false
        }
    }

    @Test func digestMismatchIsRefusedBeforeTheLibraryIsOpened() async throws {
        let folder = try ManifestFolder()
        let wrong = String(repeating: "0", count: 64)
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": wrong])
        try await withRecords(folder) { records in
            let mock = try #require(records[id: "mock"])
            #expect(mock.state == .refused)
            guard case .digestMismatch(_, let expected, let actual)? = mock.failure else {
                Issue.record("\(String(describing: mock.failure))")
                return
            }
            #expect(expected == wrong)
            let digest = LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.mockLibrary))
            #expect(actual == digest)
            #expect(mock.failure?.description.contains("digest") == true)
            #expect(records[id: "example-c"]?.state == .loaded)
            // Nothing of the refused library reached the store.
            let stored = (try? FileManager.default.contentsOfDirectory(atPath: folder.store.path)) ?? []
            #expect(!stored.contains("\(actual).so"))
        }
    }

    @Test func correctPinLoadsTheContentAddressedCopy() async throws {
        let folder = try ManifestFolder()
        let digest = LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.mockLibrary))
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": digest])
        try await withRecords(folder) { records in
            let mock = try #require(records[id: "mock"]?.adapter)
            #expect(mock.librarySHA256 == digest)
            #expect(mock.libraryPath == folder.store.appendingPathComponent("\(digest).so").path)
        }
    }

    @Test func missingEntrySymbol() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("noentry.json", ["id": "noentry", "entry": "gw_no_such_symbol"])
        try await assertRefused(folder, manifest: "noentry.json") {
            if case .missingSymbol(let symbol, _) = $0 { return symbol == "gw_no_such_symbol" }
            return false
        }
    }

    @Test func adapterSpeakingAnotherMajorIsRefusedNamingBothVersions() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "future", abiMajor: 2).install(in: folder, manifestName: "future.json")
        try await assertRefused(folder, manifest: "future.json") {
            guard case .abiMismatch(let host, let adapter, _) = $0 else { return false }
            return host == "1.1" && adapter == "2.0" && $0.description.contains("1.1") && $0.description.contains("2.0")
        }
    }

    @Test func manifestDeclaringAnotherMajorIsRefused() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("mock2.json", ["id": "mock2", "abi": ["major": 2, "minor": 0]])
        try await assertRefused(folder, manifest: "mock2.json") {
            if case .abiMismatch(_, _, let manifest) = $0 { return manifest == "2.0" }
            return false
        }
    }

    @Test func iDMismatch() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("impostor.json", ["id": "impostor"])
        try await assertRefused(folder, manifest: "impostor.json") {
            $0 == .idMismatch(manifest: "impostor", adapter: "mock")
        }
    }

    @Test func versionMismatch() async throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", ["version": "0.9.0"])
        try await assertRefused(folder, manifest: "example-c.json", expectExampleC: false) {
            $0 == .versionMismatch(manifest: "0.9.0", adapter: "1.0.0")
        }
    }

    @Test func twoManifestsWithOneIDRefuseTheSecondAndNameTheFirst() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("zz-mock-copy.json", [:])
        try await withRecords(folder) { records in
            let copy = try #require(records.first { $0.manifestPath.hasSuffix("zz-mock-copy.json") })
            guard case .duplicateID(let id, let first)? = copy.failure else {
                Issue.record("\(String(describing: copy.failure))")
                return
            }
            #expect(id == "mock")
            #expect(first.hasSuffix("/mock.json"))
            #expect(records.first { $0.manifestPath.hasSuffix("/mock.json") }?.state == .loaded)
        }
    }

    @Test func createFailureCarriesTheAdaptersMessage() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "nocreate", createFails: true).install(in: folder, manifestName: "nocreate.json")
        try await assertRefused(folder, manifest: "nocreate.json") {
            if case .createFailed(let status, let message) = $0 { return status == .internal && message == "fab: the merchant account is not configured" }
            return false
        }
    }

    /// The header's other form of create()'s error: the JSON error
    /// document, read for its message; a card number in it masked.
    @Test func createFailureAsAnErrorDocumentShowsItsMessageMasked() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "jsoncreate", createFails: true,
                                    createMessage: #"{\"message\":\"merchant_id missing (card 4111111111111111 seen)\"}"#,
                                    createStatus: "GW_E_INVALID_REQUEST").install(in: folder, manifestName: "jsoncreate.json")
        try await assertRefused(folder, manifest: "jsoncreate.json") {
            guard case .createFailed(let status, let message) = $0 else { return false }
            return status == .invalidRequest && message.hasPrefix("merchant_id missing (card ") && !message.contains("4111111111111111")
                && !message.contains("{")
        }
    }

    @Test func swiftAdapterCreateFailureFromBadConfig() async throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["config": ["otp": "12"]])
        try await withRecords(folder) { records in
            guard case .createFailed(_, let message)? = records[id: "mock"]?.failure else {
                Issue.record()
                return
            }
            #expect(message.contains("config.otp"), "\(message)")
            #expect(records[id: "example-c"]?.state == .loaded)
        }
    }

    @Test func missingRequiredFunctionIsRefused() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "noinvoke", nullInvoke: true).install(in: folder, manifestName: "noinvoke.json")
        try await assertRefused(folder, manifest: "noinvoke.json") { $0 == .missingFunction(name: "invoke") }
    }

    @Test func manifestClaimingUnimplementedMethodsAndOperationsIsRefused() async throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", [
            "methods": ["visa", "mada"], "operations": ["authorize", "verify", "refund"],
        ])
        try await withRecords(folder) { records in
            #expect(records[id: "example-c"]?.failure == .claimsUnimplemented(methods: ["mada"], operations: ["refund"]))
            #expect(records[id: "mock"]?.state == .loaded)
        }
    }

    @Test func disabledManifestsLibraryIsNeverOpened() async throws {
        let folder = try ManifestFolder()
        // A library that does not exist: opening it would fail loudly.
        try folder.writeMockVariant("off.json", ["id": "off", "enabled": false, "library": "libDoesNotExist.so"])
        try await withRecords(folder) { records in
            let off = try #require(records[id: "off"])
            #expect(off.state == .disabled)
            #expect(off.failure == nil)
            #expect(off.adapter == nil)
        }
    }

    /// The runner loads with the loader's own rules and reports the same
    /// typed failure the host would in process.
    @Test func anIsolatedAdapterIsRefusedByTheRunnerWithTheSameFailure() async throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("isolated.json", ["id": "isolated", "isolation": "process"])
        try await assertRefused(folder, manifest: "isolated.json") { $0 == .idMismatch(manifest: "isolated", adapter: "mock") }
    }

    @Test func aFileThatIsNotALibraryIsRefused() async throws {
        let folder = try ManifestFolder()
        let fake = folder.root.appendingPathComponent("libFake.so")
        try Data("not an ELF file".utf8).write(to: fake)
        try folder.writeMockVariant("fake.json", ["id": "fake", "library": fake.path])
        try await assertRefused(folder, manifest: "fake.json") {
            if case .openFailed = $0 { return true }
            return false
        }
    }
}
