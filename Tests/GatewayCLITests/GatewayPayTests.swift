import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import TestSupport
import Testing

/// `gateway pay`, `verify`, `session` and `reconcile` as a person runs them:
/// the real executable, the shipped manifests, the mock adapter through the
/// libffi bridge, SQLite in a scratch data folder.
@Suite(.heavy) struct GatewayPayTests {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-pay-\(UUID().uuidString)")

    func gateway(_ arguments: [String], manifests: URL = BuildProducts.shippedManifests) async throws -> ProcessResult {
        try await runProcessOffThePool(BuildProducts.gateway.path, arguments + ["--data", data.path, "--manifests", manifests.path])
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "not JSON: \(result.output)")
    }

    @Test func aSuccessfulPaymentAndItsIdempotentReplay() async throws {
        let first = try await gateway(["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "success", "--json"])
        #expect(first.status == 0, "\(first.output)")
        let attempt = try json(first)["attempt"] as? [String: Any]
        #expect(attempt?["status"] as? String == "succeeded")
        #expect(attempt?["providerId"] as? String == "mock")

        let keyed = ["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "success", "--idempotency-key", "order-42", "--json"]
        let a = try json(try await gateway(keyed))["attempt"] as? [String: Any]
        let b = try json(try await gateway(keyed))["attempt"] as? [String: Any]
        #expect(a?["id"] as? String != nil)
        #expect(a?["id"] as? String == b?["id"] as? String)
    }

    @Test func aDeclineIsAProblemInEnglishAndArabic() async throws {
        let result = try await gateway(["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "card_declined", "--json"])
        #expect(result.status == 2)
        let attempt = try #require(try json(result)["attempt"] as? [String: Any])
        #expect(attempt["status"] as? String == "failed")
        let problem = try #require(attempt["problem"] as? [String: Any])
        #expect(problem["type"] as? String == "https://gateway.dev/problems/card-declined")
        #expect(problem["retryable"] as? Bool == false)
        let messages = try #require(problem["payerMessage"] as? [String: String])
        #expect(messages["en"]?.contains("declined") == true)
        #expect(messages["ar"]?.contains("رفض") == true)
    }

    @Test func aDroppedConnectionIsPendingUntilAVerifyFinalisesIt() async throws {
        let result = try await gateway(["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "network_drop", "--json"])
        #expect(result.status == 0)
        let attempt = try #require(try json(result)["attempt"] as? [String: Any])
        #expect(attempt["status"] as? String == "pending")
        let id = try #require(attempt["id"] as? String)
        // A later process: the mock's books (its simulated provider) are shared through the data folder.
        let verified = try json(try await gateway(["verify", id, "--json"]))["attempt"] as? [String: Any]
        #expect(verified?["status"] as? String == "succeeded")
        let log = try await gateway(["session", id])
        #expect(log.stdout.contains("attempt.pending"))
        #expect(log.stdout.contains("attempt.succeeded"))
    }

    @Test func kwdAmountsAreShownWithThreeDecimals() async throws {
        let result = try await gateway(["pay", "--method", "mada", "--amount", "1234", "--currency", "KWD", "--country", "KW"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("1.234 KWD"))
    }

    @Test func anUnknownMethodIsRefusedWithTheReasonForEachProvider() async throws {
        let result = try await gateway(["pay", "--method", "ideal", "--amount", "1000", "--currency", "SAR"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("method_unavailable") || result.stdout.contains("Payment method unavailable"))
        #expect(result.stdout.contains("mock: does not offer ideal"))
    }

    /// Kill the process running the engine while the provider holds the
    /// payment, restart on the same SQLite file, and the attempt is found and
    /// reconciled: charged once, recorded once.
    @Test func aCrashMidAttemptIsReconciledAfterRestart() async throws {
        let manifests = data.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        // The window in which the test must see the held attempt, on a loaded machine
        // (under the whole suite a child may take many seconds to reach the mock).
        try BuildProducts.writeShippedManifest("mock.json", into: manifests) { $0["timeout_ms"] = 20000 }

        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(discard) }
        let child = try ChildProcess(BuildProducts.gateway.path,
                                     ["pay", "--method", "mada", "--amount", "1000", "--currency", "SAR", "--scenario", "timeout",
                                      "--data", data.path, "--manifests", manifests.path],
                                     standardOutput: discard, standardError: discard)

        // Wait until the attempt is committed as processing and the mock has charged it
        // (the store opened once, when the child has made its file).
        let database = data.appendingPathComponent("checkout.sqlite").path
        let ledger = data.appendingPathComponent("mock-ledger.json")
        var store: SQLiteCheckoutStore?
        var attemptID: String?
        _ = try await waitUntil {
            if store == nil, FileManager.default.fileExists(atPath: database) { store = try? SQLiteCheckoutStore(path: database) }
            guard let store,
                  let due = try? await store.dueAttempts(at: .distantFuture, limit: 1).first,
                  let session = try? await store.session(due.sessionID),
                  session.attempts.first?.status == .processing,
                  let books = FileManager.default.contents(atPath: ledger.path),
                  books.range(of: Data(due.attemptID.utf8)) != nil else { return false }
            attemptID = due.attemptID
            return true
        }
        store = nil
        // Killed whatever happened, so no child outlives the test.
        child.send(SIGKILL)
        #expect(await offThePool { child.waitForExit() } == .signalled(SIGKILL))
        let id = try #require(attemptID, "the child never reached the provider")

        // Restart on the same file: reconciliation picks it up once the dead
        // engine's lease (timeout 20 s + margin) has run out.
        var status = "processing"
        for _ in 0..<240 where status == "processing" || status == "pending" {
            let pass = try await gateway(["reconcile"], manifests: manifests)
            #expect(pass.status == 0, "\(pass.output)")
            let shown = try json(try await gateway(["session", id, "--json"], manifests: manifests))
            let attempts = (shown["session"] as? [String: Any])?["attempts"] as? [[String: Any]]
            status = attempts?.first?["status"] as? String ?? "?"
            if status == "processing" || status == "pending" { try await Task.sleep(for: .milliseconds(250)) }  // a poll interval
        }
        #expect(status == "succeeded")
        let log = try await gateway(["session", id], manifests: manifests).stdout
        #expect(log.contains("attempt.started"))
        #expect(log.contains("attempt.interrupted"))
        #expect(log.contains("attempt.succeeded"))
        // The provider charged once.
        let books = try #require(FileManager.default.contents(atPath: ledger.path))
        let payments = try #require((JSONSerialization.jsonObject(with: books) as? [String: Any])?["payments"] as? [String: [String: Any]])
        #expect(payments.values.filter { $0["paymentId"] as? String == id }.count == 1)
    }
}
