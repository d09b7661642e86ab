import Foundation
import PluginHost
import Testing

/// The host's one way to write a file that must not be torn. What a test can
/// see: the bytes, the mode, that no temporary file is left behind, and that
/// a replaced file keeps its mode. What it cannot: that `fsync` reached the
/// disk, or that the rename survives a power cut; that takes pulling the
/// power (or a fault-injecting block device), which no unit test does.
@Suite struct AtomicFileTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-file-\(UUID().uuidString)")

    func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber).intValue
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
    }

    @Test func aNewSecretFileHasExactlyTheModeAskedAndNoTemporaryFileStays() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("key")
        try AtomicFile.write(Data([1, 2, 3]), to: url, permissions: 0o600)
        #expect(try Data(contentsOf: url) == Data([1, 2, 3]))
        #expect(try mode(url) == 0o600)
        #expect(try leftovers().isEmpty)
    }

    @Test func aReplacedFileGetsTheNewBytesAndKeepsItsMode() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("manifest.json")
        try Data("old".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: url.path)
        try AtomicFile.write(Data("new".utf8), to: url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "new")
        #expect(try mode(url) == 0o640)
        #expect(try leftovers().isEmpty)
    }

    @Test func aWriteIntoAMissingFolderFailsAndLeavesNothing() throws {
        let url = folder.appendingPathComponent("absent/key")
        #expect(throws: (any Error).self) { try AtomicFile.write(Data([1]), to: url, permissions: 0o600) }
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
