import Foundation
import PaymentGateway
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

    func open() throws -> PaymentGateway {
        try PaymentGateway(configuration: .init(manifests: BuildProducts.shippedManifests.path, data: data.path))
    }

    @Test func theKeyFileIsOwnerOnlyAndSurvivesARestart() async throws {
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try open()
        await first.shutdown()
        let url = data.appendingPathComponent("idempotency.key")
        let key = try Data(contentsOf: url)
        #expect(key.count == 32)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).allSatisfy { !$0.hasSuffix(".tmp") })

        let second = try open()
        await second.shutdown()
        #expect(try Data(contentsOf: url) == key, "a restart reads the key, never makes another")
    }
}
