import Foundation
@_spi(Internals) import PaymentGateway
import TestSupport
import Testing

/// The key idempotency fingerprints are made with lives in
/// `<data>/idempotency.key`: written once, durably (a temporary file,
/// `fsync`, rename, `fsync` of the folder), owner-only, and read back
/// unchanged by every later start. A test sees the file, its mode and that
/// it survives a restart; it cannot see that the bytes reached the disk
/// before a power cut (that would take cutting the power).
@Suite struct IdempotencyKeyFileTests {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-key-\(UUID().uuidString)")

    func open() async throws -> PaymentGateway {
        var configuration = PaymentGateway.Configuration(manifests: BuildProducts.shippedManifests.path, data: data.path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        return try await PaymentGateway.open(configuration: configuration)
    }

    @Test func theKeyFileIsOwnerOnlyAndSurvivesARestart() async throws {
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await open()
        await first.shutdown()
        let url = data.appendingPathComponent("idempotency.key")
        let key = try Data(contentsOf: url)
        #expect(key.count == 32)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).allSatisfy { !$0.hasSuffix(".tmp") })

        let second = try await open()
        await second.shutdown()
        #expect(try Data(contentsOf: url) == key, "a restart reads the key, never makes another")
    }
}

/// Whether the key reaches the disk, seen from the system calls: the first
/// start of a real `gateway` process, traced by strace, must flush the
/// temporary file (`fsync` on its descriptor) before renaming it to
/// `idempotency.key`, and flush the folder after. (A key written without the
/// first is lost or torn by a power cut; without the second, the rename may be.)
@Suite struct IdempotencyKeyDurabilityTests {
    @Test func theFirstStartFlushesTheKeyBeforeAndTheFolderAfterTheRename() async throws {
        let strace = try #require(["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) },
                                  "strace is not installed: run scripts/install-prerequisites")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-key-trace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data")
        let trace = folder.appendingPathComponent("trace")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // `gateway held` opens the gateway on the data folder (making its key), lists nothing and exits.
        let run = try await runProcessOffThePool(strace, [
            "-f", "-qq", "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2", "-o", trace.path,
            BuildProducts.gateway.path, "held", "--data", data.path, "--manifests", BuildProducts.shippedManifests.path,
        ])
        #expect(run.status == 0, "\(run.output)")
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let key = data.appendingPathComponent("idempotency.key").path

        // The temporary file: opened (its descriptor), flushed, renamed to the key.
        let renameAt = try #require(lines.firstIndex { $0.contains("rename") && $0.contains("\"\(key)\"") && $0.hasSuffix("= 0") },
                                    "no rename to \(key) in the trace:\n\(lines.joined(separator: "\n"))")
        let temporary = try #require(lines[renameAt].firstMatch(of: /"([^"]*\.tmp)"/)?.1, "the rename names no temporary file: \(lines[renameAt])")
        let openAt = try #require(lines[..<renameAt].lastIndex { $0.contains("\"\(temporary)\"") && $0.contains("O_CREAT") })
        let descriptor = try #require(Self.result(of: openAt, in: lines), "\(lines[openAt])")
        #expect(lines[openAt..<renameAt].contains { $0.range(of: #"f(data)?sync\(\#(descriptor)\) += 0"#, options: .regularExpression) != nil },
                "the key file was renamed into place without an fsync of it:\n\(lines[openAt...renameAt].joined(separator: "\n"))")

        // Then the folder: opened as a directory, flushed.
        let folderOpen = try #require(lines[renameAt...].firstIndex { $0.contains("\"\(data.path)\"") && $0.contains("O_DIRECTORY") },
                                      "the folder was not opened after the rename")
        let folderDescriptor = try #require(Self.result(of: folderOpen, in: lines), "\(lines[folderOpen])")
        #expect(lines[folderOpen...].contains { $0.range(of: #"f(data)?sync\(\#(folderDescriptor)\) += 0"#, options: .regularExpression) != nil },
                "the folder was not flushed after the rename")
    }

    /// The value a traced call returned: on its line, or (when another thread
    /// interrupted it, `<unfinished ...>`) on its `resumed` line, same pid.
    static func result(of index: Int, in lines: [String]) -> Substring? {
        if let value = lines[index].firstMatch(of: /= (\d+)$/)?.1 { return value }
        guard lines[index].hasSuffix("<unfinished ...>"), let pid = lines[index].split(separator: " ").first else { return nil }
        return lines[(index + 1)...].first { $0.hasPrefix("\(pid) ") && $0.contains("resumed>") }?.firstMatch(of: /= (\d+)$/)?.1
    }
}
