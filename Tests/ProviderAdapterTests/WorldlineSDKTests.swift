import Foundation
import ProviderSandbox
import Testing
import TestSupport

/// The Worldline simulator driven by a client nobody here wrote: Worldline's
/// own Direct server SDK for Python (`onlinepayments-sdk-python3`, pinned in
/// scripts/install-prerequisites), through its public API only
/// (scripts/worldline-sdk-check), pointed at the simulator alone at the root
/// of a port of its own, as at Worldline's host. Card sales, the SDK's
/// decline exception, authorization, partial and final capture, refund,
/// cancel (all, and part), captures and refunds listed, an idempotent replay
/// with its timestamp, a key over 40 characters refused, 3-D Secure's
/// redirect, a 404; webhooks the simulator delivered over HTTP to the
/// script's own endpoint (`feedbacks.webhooksUrls`), and a notification it
/// signed, each verified (and refused altered) by the SDK's WebhooksHelper.
@Suite struct WorldlineSDKTests {
    /// Whether Python can import the SDK. CI installs it; missing there fails.
    static let isAvailable = PythonModules.importable("onlinepayments.sdk.factory")

    static var script: String { BuildProducts.repository.appendingPathComponent("scripts/worldline-sdk-check").path }

    /// One JSON line of the script.
    struct Line: Decodable {
        var check: String?
        var ok: Bool?
        var detail: String?
        var payment: String?
    }

    static func lines(_ output: String) -> [Line] {
        output.split(separator: "\n").compactMap { try? JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    }

    @Test func ciHasTheSDK() {
        #expect(Self.isAvailable || ProcessInfo.processInfo.environment["CI"] == nil,
                "CI is set but onlinepayments-sdk-python3 is not installed: run scripts/install-prerequisites")
    }

    @Test(.enabled(if: WorldlineSDKTests.isAvailable, "onlinepayments-sdk-python3 (scripts/install-prerequisites)"))
    func worldlinesOwnSDKDrivesTheSimulatorAsItDrivesWorldline() async throws {
        let sandbox = ProviderSandbox.shipped()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = try #require(sandbox.rootApplication(for: "worldline") { port in continuation.yield(port) })
        let server = Task { try await application.runService() }
        defer { server.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let run = try await runProcessOffThePool("/usr/bin/env", ["python3", Self.script, "http://127.0.0.1:\(port)",
                                                                   WorldlineSimulator.webhookKeyID, WorldlineSimulator.webhookSecret])
        let lines = Self.lines(run.stdout)
        let checks = lines.filter { $0.check != nil }
        #expect(checks.count >= 20, "\(run.output)")
        #expect(checks.contains { $0.check == "the SDK verifies the delivered payment.captured" }, "\(run.output)")
        for check in checks {
            #expect(check.ok == true, "\(check.check ?? ""): \(check.detail ?? "")")
        }
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")

        // A notification the simulator signs for the SDK's sale, checked by the SDK's own helper.
        let paymentID = try #require(lines.compactMap(\.payment).first, "\(run.output)")
        let simulator = try #require(sandbox.simulator("worldline") as? WorldlineSimulator)
        // Delivered over HTTP to the script's own endpoint, answered 200 at the first try.
        // (recorded once the answer is read, which may be just after the script saw the request)
        #expect(try await waitUntil { simulator.deliveries.count == 2 }, "\(simulator.deliveries)")
        #expect(Set(simulator.deliveries.map(\.type)) == ["payment.pending_capture", "payment.captured"], "\(simulator.deliveries)")
        #expect(simulator.deliveries.allSatisfy { $0.status == 200 && $0.tries == 1 }, "\(simulator.deliveries)")
        let webhook = try #require(simulator.webhook(forPayment: paymentID))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("worldline-webhook-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONSerialization.data(withJSONObject: ["body": webhook.body, "headers": webhook.headers]).write(to: file)
        let verified = try await runProcessOffThePool("/usr/bin/env", ["python3", Self.script, "--webhook", file.path, paymentID,
                                                                        WorldlineSimulator.webhookKeyID, WorldlineSimulator.webhookSecret])
        let webhookChecks = Self.lines(verified.stdout).filter { $0.check != nil }
        #expect(webhookChecks.count == 2 && webhookChecks.allSatisfy { $0.ok == true }, "\(verified.output)")
        #expect(verified.status == 0)
    }
}
