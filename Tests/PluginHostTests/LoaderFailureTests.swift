import Foundation
import XCTest
@testable import PluginHost

/// Every way a manifest or adapter can be refused: each test builds or
/// fabricates the bad case beside the two good shipped adapters, asserts the
/// typed failure, and asserts that the good adapters still load.
final class LoaderFailureTests: XCTestCase {
    private func assertRefused(
        _ folder: ManifestFolder, manifest name: String, expectExampleC: Bool = true,
        file: StaticString = #filePath, line: UInt = #line,
        _ check: (LoadFailure) -> Bool
    ) throws {
        let records = try folder.loadAll()
        let bad = try XCTUnwrap(records.first { $0.manifestPath.hasSuffix("/" + name) }, "no record for \(name)", file: file, line: line)
        XCTAssertEqual(bad.state, .refused, "\(name) should be refused", file: file, line: line)
        let failure = try XCTUnwrap(bad.failure, file: file, line: line)
        XCTAssertTrue(check(failure), "unexpected failure: \(failure)", file: file, line: line)
        XCTAssertFalse(failure.description.isEmpty, file: file, line: line)
        XCTAssertEqual(records[id: "mock"]?.state, .loaded, "mock must still load: \(String(describing: records[id: "mock"]?.failure))", file: file, line: line)
        if expectExampleC {
            XCTAssertEqual(records[id: "example-c"]?.state, .loaded, "example-c must still load", file: file, line: line)
        }
        for record in records { await_shutdown(record) }
    }

    private func await_shutdown(_ record: ProviderRecord) {
        guard let adapter = record.adapter else { return }
        let done = expectation(description: "shutdown")
        Task { await adapter.shutdown(grace: .seconds(1)); done.fulfill() }
        wait(for: [done], timeout: 5)
    }

    func testMalformedJSONIsRefusedWithItsPosition() throws {
        let folder = try ManifestFolder()
        try folder.write("broken.json", "{\n  \"id\": \"broken\",\n  \"enabled\": tru\n}")
        try assertRefused(folder, manifest: "broken.json") {
            if case .malformedJSON(let detail) = $0 { return !detail.isEmpty }
            return false
        }
    }

    func testSchemaViolationsAreAllReportedWithTheirPaths() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("bad.json", [
            "id": "bad", "enabled": "yes", "methods": [], "amount": ["SAR": ["min": 500, "max": 10]],
            "secrets": ["api_key": "sk_live_123"], "priority": -1, "surprise": 1,
        ])
        try assertRefused(folder, manifest: "bad.json") { failure in
            guard case .schemaViolation(let problems) = failure else { return false }
            let paths = Set(problems.map(\.path))
            let expected: Set = ["$.enabled", "$.methods", "$.amount.SAR.min", "$.secrets.api_key", "$.priority", "$.surprise"]
            XCTAssertTrue(expected.isSubset(of: paths), "paths: \(paths)")
            // A secret pasted as a value is never echoed back.
            XCTAssertFalse(failure.description.contains("sk_live_123"))
            return true
        }
    }

    func testAnUnusableTLSSecretRefusesTheAdapterNamingTheSecretNotItsValue() throws {
        let folder = try ManifestFolder()
        let certificate = folder.root.appendingPathComponent("client.pem")
        try FileManager.default.createDirectory(at: folder.root, withIntermediateDirectories: true)
        try Data("not-a-certificate-5f2e".utf8).write(to: certificate)
        try folder.writeMockVariant("mock.json", [
            "secrets": ["webhook_secret": "env:GATEWAY_MOCK_WEBHOOK_SECRET", "client_cert": "file:\(certificate.path)"],
            "tls": ["ca_certificate": "client_cert"],
        ])
        let records = try folder.loadAll()
        let mock = try XCTUnwrap(records[id: "mock"])
        XCTAssertEqual(mock.state, .refused)
        let failure = try XCTUnwrap(mock.failure)
        XCTAssertEqual(failure.kind, "tls_unusable")
        XCTAssertTrue(failure.description.contains(#"tls.ca_certificate: secret "client_cert" is not a PEM certificate"#), failure.description)
        XCTAssertFalse(failure.description.contains("not-a-certificate-5f2e"))
        XCTAssertEqual(records[id: "example-c"]?.state, .loaded, "the other adapter still loads")
        for record in records { await_shutdown(record) }
    }

    func testMissingLibraryNamesWhereItLooked() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("ghost.json", ["id": "ghost", "library": "libGhost.so"])
        try assertRefused(folder, manifest: "ghost.json") {
            if case .libraryNotFound(let library, let searched) = $0 { return library == "libGhost.so" && searched.count >= 2 }
            return false
        }
    }

    func testDigestMismatchIsRefusedBeforeTheLibraryIsOpened() throws {
        let folder = try ManifestFolder()
        let wrong = String(repeating: "0", count: 64)
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": wrong])
        let records = try folder.loadAll()
        let mock = try XCTUnwrap(records[id: "mock"])
        XCTAssertEqual(mock.state, .refused)
        guard case .digestMismatch(_, let expected, let actual)? = mock.failure else { return XCTFail("\(String(describing: mock.failure))") }
        XCTAssertEqual(expected, wrong)
        XCTAssertEqual(actual, LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.mockLibrary)))
        XCTAssertTrue(mock.failure!.description.contains("digest"))
        XCTAssertEqual(records[id: "example-c"]?.state, .loaded)
        // Nothing of the refused library reached the store.
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: folder.store.path)) ?? []
        XCTAssertFalse(stored.contains("\(actual).so"))
    }

    func testCorrectPinLoadsTheContentAddressedCopy() throws {
        let folder = try ManifestFolder()
        let digest = LibraryStore.sha256Hex(try Data(contentsOf: BuildProducts.mockLibrary))
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["sha256": digest])
        let records = try folder.loadAll()
        let mock = try XCTUnwrap(records[id: "mock"]?.adapter)
        XCTAssertEqual(mock.librarySHA256, digest)
        XCTAssertEqual(mock.libraryPath, folder.store.appendingPathComponent("\(digest).so").path)
        for record in records { await_shutdown(record) }
    }

    func testMissingEntrySymbol() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("noentry.json", ["id": "noentry", "entry": "gw_no_such_symbol"])
        try assertRefused(folder, manifest: "noentry.json") {
            if case .missingSymbol(let symbol, _) = $0 { return symbol == "gw_no_such_symbol" }
            return false
        }
    }

    func testAdapterSpeakingAnotherMajorIsRefusedNamingBothVersions() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "future", abiMajor: 2).install(in: folder, manifestName: "future.json")
        try assertRefused(folder, manifest: "future.json") {
            guard case .abiMismatch(let host, let adapter, _) = $0 else { return false }
            return host == "1.1" && adapter == "2.0" && $0.description.contains("1.1") && $0.description.contains("2.0")
        }
    }

    func testManifestDeclaringAnotherMajorIsRefused() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("mock2.json", ["id": "mock2", "abi": ["major": 2, "minor": 0]])
        try assertRefused(folder, manifest: "mock2.json") {
            if case .abiMismatch(_, _, let manifest) = $0 { return manifest == "2.0" }
            return false
        }
    }

    func testIDMismatch() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("impostor.json", ["id": "impostor"])
        try assertRefused(folder, manifest: "impostor.json") {
            $0 == .idMismatch(manifest: "impostor", adapter: "mock")
        }
    }

    func testVersionMismatch() throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", ["version": "0.9.0"])
        try assertRefused(folder, manifest: "example-c.json", expectExampleC: false) {
            $0 == .versionMismatch(manifest: "0.9.0", adapter: "1.0.0")
        }
    }

    func testTwoManifestsWithOneIDRefuseTheSecondAndNameTheFirst() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("zz-mock-copy.json", [:])
        let records = try folder.loadAll()
        let copy = try XCTUnwrap(records.first { $0.manifestPath.hasSuffix("zz-mock-copy.json") })
        guard case .duplicateID(let id, let first)? = copy.failure else { return XCTFail("\(String(describing: copy.failure))") }
        XCTAssertEqual(id, "mock")
        XCTAssertTrue(first.hasSuffix("/mock.json"))
        XCTAssertEqual(records.first { $0.manifestPath.hasSuffix("/mock.json") }?.state, .loaded)
        for record in records { await_shutdown(record) }
    }

    func testCreateFailureCarriesTheAdaptersMessage() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "nocreate", createFails: true).install(in: folder, manifestName: "nocreate.json")
        try assertRefused(folder, manifest: "nocreate.json") {
            if case .createFailed(let status, let message) = $0 { return status == .internal && message == "fab: the merchant account is not configured" }
            return false
        }
    }

    /// The header's other form of create()'s error: the JSON error
    /// document, read for its message; a card number in it masked.
    func testCreateFailureAsAnErrorDocumentShowsItsMessageMasked() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "jsoncreate", createFails: true,
                                    createMessage: #"{\"message\":\"merchant_id missing (card 4111111111111111 seen)\"}"#,
                                    createStatus: "GW_E_INVALID_REQUEST").install(in: folder, manifestName: "jsoncreate.json")
        try assertRefused(folder, manifest: "jsoncreate.json") {
            guard case .createFailed(let status, let message) = $0 else { return false }
            return status == .invalidRequest && message.hasPrefix("merchant_id missing (card ") && !message.contains("4111111111111111")
                && !message.contains("{")
        }
    }

    func testSwiftAdapterCreateFailureFromBadConfig() throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["config": ["otp": "12"]])
        let records = try folder.loadAll()
        guard case .createFailed(_, let message)? = records[id: "mock"]?.failure else { return XCTFail() }
        XCTAssertTrue(message.contains("config.otp"), message)
        XCTAssertEqual(records[id: "example-c"]?.state, .loaded)
    }

    func testMissingRequiredFunctionIsRefused() async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "noinvoke", nullInvoke: true).install(in: folder, manifestName: "noinvoke.json")
        try assertRefused(folder, manifest: "noinvoke.json") { $0 == .missingFunction(name: "invoke") }
    }

    func testManifestClaimingUnimplementedMethodsAndOperationsIsRefused() throws {
        let folder = try ManifestFolder()
        try folder.writeVariant(of: "example-c.json", as: "example-c.json", [
            "methods": ["visa", "mada"], "operations": ["authorize", "verify", "refund"],
        ])
        let records = try folder.loadAll()
        XCTAssertEqual(records[id: "example-c"]?.failure, .claimsUnimplemented(methods: ["mada"], operations: ["refund"]))
        XCTAssertEqual(records[id: "mock"]?.state, .loaded)
    }

    func testDisabledManifestsLibraryIsNeverOpened() throws {
        let folder = try ManifestFolder()
        // A library that does not exist: opening it would fail loudly.
        try folder.writeMockVariant("off.json", ["id": "off", "enabled": false, "library": "libDoesNotExist.so"])
        let records = try folder.loadAll()
        let off = try XCTUnwrap(records[id: "off"])
        XCTAssertEqual(off.state, .disabled)
        XCTAssertNil(off.failure)
        XCTAssertNil(off.adapter)
    }

    /// The runner loads with the loader's own rules and reports the same
    /// typed failure the host would in process.
    func testAnIsolatedAdapterIsRefusedByTheRunnerWithTheSameFailure() throws {
        let folder = try ManifestFolder()
        try folder.writeMockVariant("isolated.json", ["id": "isolated", "isolation": "process"])
        try assertRefused(folder, manifest: "isolated.json") { $0 == .idMismatch(manifest: "isolated", adapter: "mock") }
    }

    func testAFileThatIsNotALibraryIsRefused() throws {
        let folder = try ManifestFolder()
        let fake = folder.root.appendingPathComponent("libFake.so")
        try Data("not an ELF file".utf8).write(to: fake)
        try folder.writeMockVariant("fake.json", ["id": "fake", "library": fake.path])
        try assertRefused(folder, manifest: "fake.json") {
            if case .openFailed = $0 { return true }
            return false
        }
    }
}
