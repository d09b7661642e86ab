import CheckoutEngine
import Foundation
import Synchronization
import Testing
import TestSupport

/// `gateway serve` processes on one PostgreSQL database, paying through the
/// mock, whose books (`mock-ledger.json`, shared under a lock) play the one
/// provider both hosts call: what a merchant runs behind a load balancer.
///
/// Heavy: `gateway serve` processes, hundreds of requests, a cluster of a
/// test's own.
@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"), .serialized, .heavy)
struct ManyHostsServeTests {
    /// A folder with the mock's manifest, the shared books, and a data folder per host.
    struct Site {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hosts-\(UUID().uuidString)")
        var manifests: URL { folder.appendingPathComponent("manifests") }
        var books: URL { folder.appendingPathComponent("provider") }
        func data(_ host: Int) -> URL { folder.appendingPathComponent("data-\(host)") }

        init() throws {
            try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"),
                                             to: manifests.appendingPathComponent("mock.json"))
            try FileManager.default.createDirectory(at: books, withIntermediateDirectories: true)
        }

        /// Host `host` on `url` (a database URL without its password).
        func serve(_ host: Int, database url: String) async throws -> ServeProcess {
            try await ServeProcess(["serve", "--port", "0", "--manifests", manifests.path, "--data", data(host).path, "--database", url,
                                    "--database-password-file", ProcessInfo.processInfo.environment["GATEWAY_TEST_POSTGRES_PASSWORD_FILE"] ?? "",
                                    "--log-level", "info"],
                                   environment: ["GATEWAY_SANDBOX_STATE": books.path])
        }

        /// Hosts share the idempotency fingerprint key (docs/postgresql.md):
        /// host 0 made it; every other host gets a copy before it starts.
        func shareKey(to host: Int) throws {
            try FileManager.default.createDirectory(at: data(host), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: data(0).appendingPathComponent("idempotency.key"),
                                             to: data(host).appendingPathComponent("idempotency.key"))
        }

        /// The test API key host 0 (`host`) made on its first start, once it is recorded.
        func apiKey(_ host: ServeProcess) async throws -> String { try await host.testAPIKey(in: data(0)) }

        /// The charges the provider's books hold, by payment id.
        func charges() throws -> [String: Int] {
            guard let data = FileManager.default.contents(atPath: books.appendingPathComponent("mock-ledger.json").path) else { return [:] }
            let ledger = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            var charges: [String: Int] = [:]
            for case let payment as [String: Any] in (ledger["payments"] as? [String: Any] ?? [:]).values {
                guard let id = payment["paymentId"] as? String, ["succeeded", "authorized"].contains(payment["status"] as? String) else { continue }
                charges[id, default: 0] += 1
            }
            return charges
        }
    }

    typealias Answer = Loopback.Answer

    static func call(_ port: Int, _ method: String, _ path: String, key: String, body: String? = nil, idempotencyKey: String? = nil) async throws -> Answer {
        try await Loopback.request(port: port, method, path, body: body, key: key, headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:])
    }

    /// Two hosts: 100 identical requests split across them run once; a host
    /// killed mid-attempt (SIGKILL, after the provider charged) has that
    /// attempt reconciled by the other once its lease ends, the provider's
    /// books showing one charge.
    @Test(.heavy(.shared, limit: .seconds(300)))
    func twoServeProcessesOnOneDatabase() async throws {
        let site = try Site()
        let url = try #require(TestPostgres.url(schema: TestPostgres.newSchema()))
        let first = try await site.serve(0, database: url)
        let a = try await first.port()
        let key = try await site.apiKey(first)
        try site.shareKey(to: 1)
        let second = try await site.serve(1, database: url)
        let b = try await second.port()
        let ports = [a, b]

        // 100 identical session requests, then 100 identical attempts, half to each host.
        let sessions = try await withThrowingTaskGroup(of: Answer.self) { group in
            for i in 0..<100 {
                group.addTask { try await Self.call(ports[i % 2], "POST", "/v1/sessions", key: key, body: #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-100"}"#, idempotencyKey: "create-100") }
            }
            return try await group.reduce(into: [Answer]()) { $0.append($1) }
        }
        let ids = Set(sessions.compactMap { $0.json["id"] as? String })
        #expect(sessions.allSatisfy { $0.status == 201 || $0.status == 200 }, "\(sessions.map(\.status))")
        #expect(ids.count == 1, "\(ids)")
        let session = try #require(ids.first)
        let attempts = try await withThrowingTaskGroup(of: Answer.self) { group in
            for i in 0..<100 {
                group.addTask {
                    try await Self.call(ports[i % 2], "POST", "/v1/sessions/\(session)/attempts", key: key,
                                        body: #"{"method":"visa","provider":"mock","instrument":{"scenario":"success"}}"#, idempotencyKey: "pay-100")
                }
            }
            return try await group.reduce(into: [Answer]()) { $0.append($1) }
        }
        let attemptIDs = Set(attempts.compactMap { $0.json["id"] as? String })
        #expect(attempts.allSatisfy { $0.status < 300 }, "\(Set(attempts.map { "\($0.status) \($0.json["code"] ?? "")" }))")
        #expect(attemptIDs.count == 1, "\(attemptIDs)")
        #expect(try site.charges() == [attemptIDs.first ?? "": 1], "the provider charged once")

        // Host A dies mid-attempt, after the provider charged: host B
        // reconciles it once A's lease ends (the mock's 5 s timeout + 5 s).
        let doomed = try await Self.call(a, "POST", "/v1/sessions", key: key, body: #"{"amount":3000,"currency":"SAR","country":"SA","orderId":"o-killed"}"#)
        let doomedSession = try #require(doomed.json["id"] as? String)
        let inFlight = Task {
            try? await Self.call(a, "POST", "/v1/sessions/\(doomedSession)/attempts", key: key,
                                 body: #"{"method":"visa","provider":"mock","instrument":{"scenario":"timeout"}}"#)
        }
        #expect(try await waitUntil(within: .seconds(60)) { ((try? site.charges()) ?? [:]).count == 2 }, "the provider never charged")
        #expect(await first.kill() == .signalled(SIGKILL))
        _ = await inFlight.value
        let charged = try #require(try site.charges().keys.first { !attemptIDs.contains($0) })
        let reconciled = try await waitUntil(within: .seconds(120)) {
            let read = try? await Self.call(b, "GET", "/v1/sessions/\(doomedSession)", key: key)
            return ((read?.json["attempts"] as? [[String: Any]])?.first?["status"] as? String) == "succeeded"
        }
        let settled = try await Self.call(b, "GET", "/v1/sessions/\(doomedSession)", key: key).json
        #expect(reconciled, "host B did not reconcile host A's attempt: \(settled)")
        let attemptsSeen = settled["attempts"] as? [[String: Any]] ?? []
        #expect(attemptsSeen.count == 1 && attemptsSeen.first?["id"] as? String == charged)
        #expect(try site.charges()[charged] == 1, "one charge for the killed host's attempt")
        #expect(await second.stop() == .exited(0))
    }

    /// A cluster of the test's own (scripts/test-postgres cluster), which it
    /// stops and starts; its URL (no password) and password file.
    ///
    /// A test runs one with ``with(_:)``, which stops it however the test
    /// ends: a cluster left running by a failed test would keep a PostgreSQL
    /// server on the two cores every other test shares.
    struct OwnCluster {
        let directory: String
        let url: String
        var passwordFile: String { directory + "/password" }

        /// Runs `body` with a new cluster, then stops the cluster if it is
        /// still running, whether `body` returns or throws.
        @discardableResult
        static func with<T>(_ body: (OwnCluster) async throws -> T) async throws -> T {
            let cluster = try await OwnCluster()
            let result: T
            do {
                result = try await body(cluster)
            } catch {
                await cluster.stopIfRunning()
                throw error
            }
            await cluster.stopIfRunning()
            return result
        }

        private init() async throws {
            let root = try #require(TestPostgres.root), script = try #require(TestPostgres.script)
            directory = root + "/away-" + UUID().uuidString.prefix(8).lowercased()
            let made = try await runProcessOffThePool(script, ["cluster", directory])
            #expect(made.status == 0, "\(made.output)")
            url = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "?sslmode=disable"
        }

        func stop() async throws {
            let stopped = try await runProcessOffThePool(TestPostgres.script!, ["stop", directory, "fast"])
            #expect(stopped.status == 0, "\(stopped.output)")
        }

        func start() async throws {
            let started = try await runProcessOffThePool(TestPostgres.script!, ["start", directory])
            #expect(started.status == 0, "\(started.output)")
        }

        /// Stops the cluster when its server is running (its `postmaster.pid`
        /// is there), quietly: what the test expected of it is the test's.
        func stopIfRunning() async {
            guard let script = TestPostgres.script,
                  FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") else { return }
            _ = try? await runProcessOffThePool(script, ["stop", directory, "immediate"])
        }
    }

    /// The database stops under a running host, then comes back; then the
    /// host starts while it is away. Meanwhile every call that needs the
    /// store is a 503 `store_unavailable` (retryable, with a Retry-After),
    /// `/readyz` fails, nothing reaches the provider and nothing is half
    /// written; once the database is back, the host is ready by itself.
    @Test(.heavy(.shared, limit: .seconds(300)))
    func theDatabaseGoesAwayAndComesBack() async throws {
        try await OwnCluster.with { cluster in
            let site = try Site()
            func serve() async throws -> ServeProcess {
                try await ServeProcess(["serve", "--port", "0", "--manifests", site.manifests.path, "--data", site.data(0).path,
                                        "--database", cluster.url, "--database-password-file", cluster.passwordFile, "--log-level", "info"],
                                       environment: ["GATEWAY_SANDBOX_STATE": site.books.path])
            }
            var host = try await serve()
            var port = try await host.port()
            let key = try await site.apiKey(host)
            let open = try await Self.call(port, "POST", "/v1/sessions", key: key, body: #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-away"}"#)
            #expect(open.status == 201)
            let session = try #require(open.json["id"] as? String)
            let pay = #"{"method":"visa","provider":"mock","instrument":{"scenario":"success"}}"#

            try await cluster.stop()
            for (method, path, body) in [("POST", "/v1/sessions/\(session)/attempts", pay), ("GET", "/v1/sessions/\(session)", nil),
                                         ("POST", "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-2"}"#)] {
                let answer = try await Self.call(port, method, path, key: key, body: body, idempotencyKey: method == "POST" ? "away-\(path)" : nil)
                #expect(answer.status == 503 && answer.json["code"] as? String == "store_unavailable" && answer.json["retryable"] as? Bool == true,
                        "\(method) \(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                #expect(answer.headers["retry-after"] == "2" && answer.headers["content-type"] == "application/problem+json")
            }
            #expect(try await Self.call(port, "GET", "/readyz", key: key).status == 503)
            #expect(try site.charges().isEmpty, "a provider was called for a change that could not be recorded")

            try await cluster.start()
            #expect(try await waitUntil(within: .seconds(60)) { (try? await Self.call(port, "GET", "/readyz", key: key).status) == 200 }, "not ready again")
            let paid = try await Self.call(port, "POST", "/v1/sessions/\(session)/attempts", key: key, body: pay, idempotencyKey: "away-pay")
            #expect(paid.status == 201 && paid.json["status"] as? String == "succeeded", "\(String(decoding: paid.body, as: UTF8.self))")
            let stored = try await Self.call(port, "GET", "/v1/sessions/\(session)", key: key)
            #expect((stored.json["attempts"] as? [Any])?.count == 1, "nothing half-written: one attempt, the one that paid")
            #expect(try site.charges().count == 1)
            #expect(await host.stop() == .exited(0))
            // Each step of its shutdown said; the gateway's closes the store, last (ShutdownStep).
            let stopped = host.stderr.split(separator: "\n").compactMap { $0.firstMatch(of: /shutdown: (.+) stopped \(/).map { String($0.output.1) } }
            #expect(stopped == ["the checkout API", "the manifests watcher", "the gateway"], "\(host.stderr.suffix(3000))")

            // Started while the database is away: up, not ready, 503; ready once it is back.
            try await cluster.stop()
            host = try await serve()
            port = try await host.port()
            #expect(try await Self.call(port, "GET", "/readyz", key: key).status == 503)
            let early = try await Self.call(port, "GET", "/v1/sessions/\(session)", key: key)
            #expect(early.status == 503 && early.json["code"] as? String == "store_unavailable")
            try await cluster.start()
            #expect(try await waitUntil(within: .seconds(60)) { (try? await Self.call(port, "GET", "/readyz", key: key).status) == 200 }, "not ready once the database started")
            #expect(try await Self.call(port, "GET", "/v1/sessions/\(session)", key: key).json["status"] as? String == "completed")
            #expect(await host.stop() == .exited(0))
            try await cluster.stop()
        }
    }
}
