import CheckoutEngine
import PaymentGateway
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Synchronization
import Testing
import TestSupport

/// `gateway keys` and the first start of `gateway serve`, run as an operator
/// runs them: the executable, in a scratch data folder.
///
/// Heavy: each test starts `gateway` processes, `gateway serve` among them.
@Suite(.heavy) struct KeysCommandTests {
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func gateway(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcessOffThePool(BuildProducts.gateway.path, arguments)
    }

    @Test func keysCreateListAndRevokeThroughTheCLIAndNoSecretIsKept() async throws {
        let data = try Self.scratch().appendingPathComponent("data").path
        let created = try await Self.gateway(["keys", "create", "--mode", "live", "--name", "ci backend", "--data", data])
        #expect(created.status == 0, "\(created.output)")
        let secret = try #require(created.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("gk_live_") }, "\(created.stdout)")
        #expect(APIKeys.mode(ofSecret: secret) == .live)
        let id = try #require(created.stdout.firstMatch(of: /key_[0-9a-z]+/).map { String($0.output) }, "\(created.stdout)")

        let listed = try await Self.gateway(["keys", "list", "--json", "--data", data])
        #expect(listed.status == 0, "\(listed.output)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["id"] as? String == id && row["name"] as? String == "ci backend" && row["mode"] as? String == "live")
        #expect(row["prefix"] as? String == String(secret.prefix(12)) + "…")
        let createdAt = try #require(row["createdAt"] as? String, "dates are wire date strings: \(row)")
        #expect(WireDate.parse(createdAt).map { $0.timeIntervalSince1970 > 1_700_000_000 } == true && row["revokedAt"] == nil, "\(createdAt)")
        #expect(createdAt.count == 24 && createdAt.hasSuffix("Z"), "RFC 3339 in UTC with milliseconds: \(createdAt)")
        let table = try await Self.gateway(["keys", "list", "--data", data])
        #expect(table.stdout.contains(id) && table.stdout.contains("ci backend") && table.stdout.contains("live"), "\(table.stdout)")
        for output in [listed.output, table.output] {
            #expect(!output.contains(secret.dropFirst(12)), "list shows a secret")
        }

        let revoked = try await Self.gateway(["keys", "revoke", id, "--data", data])
        #expect(revoked.status == 0 && revoked.stdout.contains("revoked live key \(id)"), "\(revoked.output)")
        let after = try await Self.gateway(["keys", "list", "--json", "--data", data])
        let revokedRow = try #require((try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])?.first)
        #expect((revokedRow["revokedAt"] as? String).flatMap(WireDate.parse).map { $0.timeIntervalSince1970 > 1_700_000_000 } == true, "\(revokedRow)")

        // What a running server reads: the key is known by its hash, and revoked
        // (the database opened and read off the concurrency pool: both block).
        let hash = try #require(APIKeys.record(forSecret: secret)).hash
        let database = URL(fileURLWithPath: data).appendingPathComponent("checkout.sqlite").path
        let stored = try #require(try await offThePool { () throws -> APIKeyRecord? in
            try SQLiteCheckoutStore(path: database).apiKey(hash: hash)
        })
        #expect(stored.id == id && stored.isRevoked)
        // The secret is nowhere in the database. (The store just released may
        // still be closing its last connection on a thread of its own, and SQLite
        // then removes the -wal and -shm files: one that is gone holds nothing.)
        for file in try FileManager.default.contentsOfDirectory(atPath: data) where file.hasPrefix("checkout.sqlite") {
            guard let bytes = FileManager.default.contents(atPath: URL(fileURLWithPath: data).appendingPathComponent(file).path) else { continue }
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is in \(file)")
        }

        let unknown = try await Self.gateway(["keys", "revoke", "key_nope", "--data", data])
        #expect(unknown.status != 0 && unknown.output.contains("no API key with id key_nope"), "\(unknown.output)")
        let badMode = try await Self.gateway(["keys", "create", "--mode", "production", "--data", data])
        #expect(badMode.status != 0)
    }

    /// The first start makes a test key in `<data>/test-api-key` (0600) that
    /// the API takes; a second start keeps it; neither prints or logs it.
    @Test func serveWritesTheFirstTestKeyOnceToAFileOnlyItsOwnerReads() async throws {
        let folder = try Self.scratch()
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests, to: manifests)
        try? FileManager.default.removeItem(at: manifests.appendingPathComponent("schema"))
        let data = folder.appendingPathComponent("data")
        let file = data.appendingPathComponent("test-api-key")
        let arguments = ["serve", "--port", "0", "--manifests", manifests.path, "--data", data.path, "--log-level", "trace"]

        let first = try await ServeProcess(arguments)
        let port = try await first.port()
        let secret = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(APIKeys.mode(ofSecret: secret) == .test)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue & 0o777 == 0o600, "mode \(String(mode.intValue, radix: 8))")
        #expect(first.stdout.contains(file.path), "says where the key is: \(first.stdout)")
        #expect(try await Self.post(port: port, key: nil) == 401)
        #expect(try await Self.post(port: port, key: secret) == 201)
        #expect(await first.stop() == .exited(0))
        #expect(!(first.stdout + first.stderr).contains(secret.dropFirst(8)), "the key was printed or logged")

        let second = try await ServeProcess(arguments)
        let again = try await second.port()
        #expect(try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == secret, "the key file was replaced")
        #expect(second.stdout.contains(file.path))
        #expect(try await Self.post(port: again, key: secret) == 201)
        #expect(await second.stop() == .exited(0))
        #expect(!(second.stdout + second.stderr).contains(secret.dropFirst(8)), "the key was printed or logged")
        let keys = try await Self.gateway(["keys", "list", "--json", "--data", data.path])
        #expect((try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [Any])?.count == 1, "\(keys.output)")
    }

    static func post(port: Int, key: String?) async throws -> Int {
        try await Loopback.request(port: port, "POST", "/v1/sessions", body: #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-1"}"#, key: key).status
    }
}

