import CheckoutEngine
import Foundation
import MerchantWebhooks
import PostgresCheckoutStore
import SQLiteCheckoutStore
import Testing
import TestSupport

/// Deliveries survive the host: a `gateway serve` killed with SIGKILL while
/// a delivery is in flight sends it again once restarted, under the same
/// `webhook-id`; two hosts over one PostgreSQL store each send every event
/// once in the normal case.
@Suite(.serialized) struct WebhookCrashTests {
    @Test func aHostKilledMidDeliveryDeliversItAfterRestartUnderTheSameID() async throws {
        let folder = try ManifestFolder()
        let data = folder.root.appendingPathComponent("data")
        let receiver = try await ScriptedReceiver { index, _ in index == 0 ? .hang : .answer(200) }
        let arguments = ["serve", "--port", "0", "--manifests", folder.manifests.path, "--data", data.path, "--log-level", "info",
                         "--allow-private-webhooks", "--webhook-timeout", "5", "--webhook-retry-first", "1", "--webhook-retry-longest", "1"]
        let first = try await ServeProcess(arguments)
        let port = try await first.port()
        let key = try await first.testAPIKey(in: data)
        let registered = try await Loopback.request(port: port, "POST", "/v1/webhook-endpoints", body: #"{"url":"\#(receiver.url)"}"#, key: key)
        #expect(registered.status == 201, "\(registered.text)")
        let opened = try await Loopback.request(port: port, "POST", "/v1/sessions", body: #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"k-1"}"#, key: key)
        let session = try #require(opened.json["id"] as? String, "\(opened.text)")
        // The first delivery hangs at the receiver: the host dies with it in flight.
        #expect(try await waitUntil { receiver.received.count == 1 })
        _ = await first.kill()
        let inFlight = try #require(receiver.received.first).webhookID
        #expect(inFlight == "evt_\(session)_1")

        let second = try await ServeProcess(arguments)
        let secondPort = try await second.port()
        let paid = try await Loopback.request(port: secondPort, "POST", "/v1/sessions/\(session)/attempts", body: #"{"method":"mada"}"#, key: key)
        #expect(paid.status == 201, "\(paid.text)")
        // Every event of the session arrives, the first under the id it had, in order.
        #expect(try await waitUntil { Set(receiver.received.filter(\.acknowledged).map(\.sequence)) == [1, 2, 3, 4] },
                "\(receiver.received.map { ($0.webhookID, $0.acknowledged) })\n\(second.stderr.suffix(3000))")
        let acknowledged = receiver.received.filter(\.acknowledged)
        #expect(acknowledged.first?.webhookID == inFlight)
        #expect(acknowledged.map(\.sequence) == [1, 2, 3, 4])
        // Ops see it per endpoint: tries by outcome, and the queue (reported every few seconds).
        let endpoint = try #require(registered.json["id"] as? String)
        func metrics() async throws -> String { try await Loopback.request(port: secondPort, "GET", "/metrics").text }
        let reported = try await waitUntil {
            let text = (try? await metrics()) ?? ""
            return text.contains("webhook_oldest_undelivered_seconds{endpoint=\"\(endpoint)\"} 0")
                && text.contains("webhook_deliveries_retrying{endpoint=\"\(endpoint)\"} 0")
        }
        let exposition = try await metrics()
        #expect(reported, "\(exposition)")
        let delivered = exposition.split(separator: "\n").filter { $0.hasPrefix("webhook_deliveries_total") && $0.contains(endpoint) && $0.contains("delivered") }
        #expect(delivered.count == 1 && delivered.first?.hasSuffix(" 4") == true, "\(delivered)")
        _ = await second.stop()
        await receiver.close()
    }

    @Test func twoHostsOnOnePostgreSQLStoreSendEachEventOnce() async throws {
        guard TestPostgres.isAvailable else {
            #expect(!TestPostgres.requiredButMissing, "CI is set but GATEWAY_TEST_POSTGRES_URL is not: run the tests under scripts/test-postgres")
            return
        }
        let schema = TestPostgres.newSchema()
        let one = WebhookDeliveryTests.Harness(store: try await TestPostgres.store(schema: schema))
        let other = WebhookDeliveryTests.Harness(store: try await TestPostgres.store(schema: schema))
        let receiver = try await ScriptedReceiver()
        _ = try await one.endpoints.create(url: receiver.url, mode: .test, types: nil, description: "two hosts")
        one.deliverer.start()
        other.deliverer.start()
        // Both hosts take payments; both deliver.
        for index in 0..<8 { try await (index.isMultiple(of: 2) ? one : other).session() }
        let expected = try await one.events()
        #expect(expected.count == 32)
        #expect(try await waitUntil { Set(receiver.received.map(\.webhookID)).isSuperset(of: expected) })
        let ids = receiver.received.map(\.webhookID)
        #expect(ids.count == Set(ids).count, "an event was delivered twice: \(Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.keys)")
        #expect(Set(ids) == expected)
        await receiver.close()
        await one.close()
        await other.close()
    }
}
