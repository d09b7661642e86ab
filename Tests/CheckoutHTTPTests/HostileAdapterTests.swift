import Foundation
import PluginHost
import Testing
import TestSupport

/// Issue 33, done when: every shipped manifest at file format 1.2 (which
/// runs an adapter in a process of its own unless it says otherwise), a
/// hostile adapter beside them (the chaos adapter, built from the header
/// alone), and the host started the way the README says (`gateway serve
/// --sandbox`, the shipped adapters against their simulators). Every layer
/// is in force for every adapter; each attack the hostile adapter makes
/// from inside a real payment is blocked; the host keeps serving the others,
/// and nothing it trusts has changed.
@Suite(.heavy) struct HostileAdapterTests {
    /// The shipped adapters, and the hostile one.
    static let shipped = ["example-c", "hyperpay", "mock", "stcpay", "swedbankpay", "tabby", "tamara", "worldline"]

    struct Site {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        var manifests: URL { root.appendingPathComponent("manifests") }
        var data: URL { root.appendingPathComponent("data") }
        var adminToken: URL { root.appendingPathComponent("admin-token") }

        init() throws {
            try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
            for id in HostileAdapterTests.shipped {
                try BuildProducts.writeShippedManifest("\(id).json", into: manifests) { manifest in
                    manifest["file_format_version"] = "1.2.0"
                    manifest.removeValue(forKey: "isolation")
                }
            }
            let chaos: [String: Any] = [
                "file_format_version": "1.2.0", "id": "chaos", "version": "1.0.0", "enabled": true, "mode": "test",
                "library": BuildProducts.directory.appendingPathComponent("libChaosAdapter.so").path,
                "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"], "countries": ["SA"],
                "operations": ["authorize", "verify"], "timeout_ms": 10_000, "priority": 1,
            ]
            try JSONSerialization.data(withJSONObject: chaos, options: [.sortedKeys]).write(to: manifests.appendingPathComponent("chaos.json"))
            try Data("admin-\(UUID().uuidString)".utf8).write(to: adminToken)
        }

        /// Every manifest's bytes, by name.
        func manifestBytes() throws -> [String: Data] {
            var bytes: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: manifests.path) {
                bytes[name] = FileManager.default.contents(atPath: manifests.appendingPathComponent(name).path)
            }
            return bytes
        }
    }

    /// One attack, made by the chaos adapter while it authorizes a payment
    /// of a session of its own; what it came to (its providerStatus).
    static func attack(_ port: Int, key: String, _ name: String, _ fields: [String: Any] = [:]) async throws -> String {
        let session = try await Loopback.request(port: port, "POST", "/v1/sessions", body: #"{"amount":100,"currency":"SAR","country":"SA","orderId":"o-attack"}"#, key: key)
        let id = try #require(session.json["id"] as? String, "\(session.text)")
        var instrument: [String: Any] = ["chaos": "attack", "attack": name]
        instrument.merge(fields) { $1 }
        let body = try JSONSerialization.data(withJSONObject: ["method": "visa", "provider": "chaos", "instrument": instrument], options: [.withoutEscapingSlashes])
        let paid = try await Loopback.request(port: port, "POST", "/v1/sessions/\(id)/attempts", body: String(decoding: body, as: UTF8.self), key: key)
        return paid.json["providerStatus"] as? String ?? "no answer: \(paid.status) \(paid.text)"
    }

    @Test(.heavy(.shared, limit: .seconds(300)))
    func withTheShippedManifestsIsolatedEveryAttackIsBlocked() async throws {
        let site = try Site()
        defer { try? FileManager.default.removeItem(at: site.root) }
        let before = try site.manifestBytes()
        let server = try await ServeProcess(["serve", "--port", "0", "--manifests", site.manifests.path, "--data", site.data.path,
                                             "--sandbox", "--admin-token-file", site.adminToken.path, "--log-level", "info"])
        let port = try await server.port()
        let key = try await server.testAPIKey(in: site.data)

        // Every adapter in its own process, every layer in force.
        let listed = try await Loopback.request(port: port, "GET", "/v1/providers", key: key)
        let providers = (try? JSONSerialization.jsonObject(with: listed.body)) as? [[String: Any]] ?? []
        let layers = SandboxLayer.allCases.filter { $0 != .landlock || SandboxLayer.landlockABI != nil }.map(\.rawValue)
        for id in Self.shipped + ["chaos"] {
            let provider = try #require(providers.first { $0["id"] as? String == id }, "\(id) is not listed: \(listed.text)")
            #expect(provider["isolation"] as? String == "process", "\(id): \(provider)")
            let sandbox = provider["sandbox"] as? [[String: Any]] ?? []
            let inForce = sandbox.filter { $0["inForce"] as? Bool == true }.compactMap { $0["layer"] as? String }
            #expect(inForce == layers, "\(id): \(sandbox)")
        }

        // `gateway providers` on the same folder (no --sandbox: the live
        // adapters stay disabled) says the same of those it loads.
        let table = try await runProcessOffThePool(BuildProducts.gateway.path, ["providers", "--manifests", site.manifests.path])
        #expect(table.status == 0, "\(table.output)")
        for id in ["example-c", "mock", "chaos"] {
            #expect(table.stdout.contains("\(id) runs in its own process, sandbox: \(layers.joined(separator: ", ")) in force"), "\(table.output)")
        }

        // The attacks of issue 33, each from inside a payment.
        let host = server.pid
        let manifest = site.manifests.appendingPathComponent("mock.json").path
        let forged = site.manifests.appendingPathComponent("forged.json").path
        var blocked: [(String, [String: Any], (String) -> Bool)] = [
            ("read", ["path": manifest], { $0 == "failed:\(ENOENT)" }),
            ("read", ["path": site.data.appendingPathComponent("test-api-key").path], { $0 == "failed:\(ENOENT)" }),
            ("read", ["path": site.adminToken.path], { $0 == "failed:\(ENOENT)" }),
            ("list", ["path": site.data.path], { $0 == "failed:\(ENOENT)" }),
            ("write", ["path": forged], { $0.hasPrefix("failed:") }),
            ("write", ["path": site.data.appendingPathComponent("checkout.sqlite").path], { $0.hasPrefix("failed:") }),
            ("kill", ["pid": host], { $0 == "failed:\(ESRCH)" }),
            ("ptrace", ["pid": host], { $0 == "failed:\(EPERM)" }),
            ("vm_read", ["pid": host], { $0 == "failed:\(EPERM)" }),
            ("unix", ["path": "/var/run/postgresql/.s.PGSQL.5432"], { $0 == "failed:\(EPERM)" }),
            ("exec", [:], { $0 == "failed:\(EPERM)" }),
            ("unshare", [:], { $0 == "failed:\(EPERM)" }),
            ("orphan", ["name": "gwo-hostile"], { $0 == "failed:\(EPERM)" }),
            ("shm", [:], { $0 == "failed:\(EPERM)" }),
            ("write", ["path": "/proc/1/mem"], { $0.hasPrefix("failed:") }),
        ]
        // Other adapters' runners, by their process ids on the host.
        let runners = ProcessTable.children(of: host, named: "gateway-runner")
        #expect(runners.count == Self.shipped.count + 1, "a runner per adapter: \(runners)")
        for runner in runners {
            blocked.append(("kill", ["pid": runner], { $0 == "failed:\(ESRCH)" }))
        }
        // The attacks reach the adapter and are carried out (not vacuous): its own /tmp and the system's libraries are there.
        #expect(try await Self.attack(port, key: key, "write", ["path": "/tmp/scratch"]) == "written")
        #expect(try await Self.attack(port, key: key, "read", ["path": "/etc/ld.so.cache"]) == "opened")
        for (name, fields, isBlocked) in blocked {
            let outcome = try await Self.attack(port, key: key, name, fields)
            #expect(isBlocked(outcome), "\(name) \(fields): \(outcome)")
        }

        // The host serves the others, and nothing it trusts changed.
        #expect(ProcessTable.isRunning(host))
        #expect(runners.allSatisfy(ProcessTable.isRunning), "a runner was killed")
        let session = try await Loopback.request(port: port, "POST", "/v1/sessions", body: #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-after"}"#, key: key)
        let sessionID = try #require(session.json["id"] as? String)
        let paid = try await Loopback.request(port: port, "POST", "/v1/sessions/\(sessionID)/attempts",
                                              body: #"{"method":"visa","provider":"mock","instrument":{"scenario":"success"}}"#, key: key)
        #expect(paid.json["status"] as? String == "succeeded", "\(paid.text)")
        #expect(try site.manifestBytes() == before, "a manifest changed")
        #expect(ProcessTable.named("gwo-hostile").isEmpty)
        #expect(await server.stop() == .exited(0))
    }
}
