import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import SQLiteCheckoutStore
import TestSupport
import Testing

/// Notifications through the real mock adapter over the bridge: its `webhook`
/// operation verifies the signature (the secret from its manifest's
/// `webhook_secret`, here a `file:` secret), and the engine applies a verified one
/// once per event id.
@Suite struct MockWebhookTests {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-webhook-\(UUID().uuidString)")
    static let secret = "mock-webhook-secret-for-tests"

    /// The shipped manifests, with the mock's webhook secret read from a file
    /// instead of `env:`: a test that called `setenv` would race every other
    /// test's reads of the environment (a child process spawned meanwhile
    /// copies it), which glibc does not make safe.
    let manifests: URL

    init() throws {
        manifests = data.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        let secretFile = data.appendingPathComponent("mock-webhook-secret")
        try Data(Self.secret.utf8).write(to: secretFile)
        try BuildProducts.writeShippedManifest("mock.json", into: manifests) { $0["secrets"] = ["webhook_secret": "file:\(secretFile.path)"] }
        try BuildProducts.writeShippedManifest("example-c.json", into: manifests)
    }

    /// The event types recorded for session `id`, read from the database file.
    func recordedEvents(_ id: String) async throws -> [SessionEvent.Kind] {
        let store = try SQLiteCheckoutStore(path: data.appendingPathComponent("checkout.sqlite").path)
        return try await store.events(ofSession: id, after: 0).map(\.type)
    }

    func signed(_ body: Data, with secret: String = Self.secret) -> [String: String] {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return ["X-Mock-Signature": code.map { String(format: "%02x", $0) }.joined()]
    }

    @Test func aVerifiedNotificationSettlesAPendingAttemptOnceAndAForgedOneChangesNothing() async throws {
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: data.path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        let gateway = try await PaymentGateway.open(configuration: configuration)
        let session = try await gateway.createSession(NewSession(amount: Money(value: 2500, currency: "SAR"), country: "SA", orderId: "o-webhook"))
        // Settles at the mock a moment later; the host only learns it by verify or by notification.
        let pending = try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", instrument: ["scenario": .string("pending_then_success")]))
        #expect(pending.status == .pending)
        let reference = try #require(pending.providerReference)
        let body = Data(#"{"eventId":"evt-1","providerReference":"\#(reference)","status":"succeeded"}"#.utf8)

        // Forged: signed with another secret. Refused, and the attempt is untouched.
        await #expect { try await gateway.webhook(provider: "mock", headers: signed(body, with: "guess"), body: body) } throws: {
            ($0 as? Problem)?.code == .webhookUnverified
        }
        var stored = try await gateway.session(session.session.id).session
        #expect(stored.attempts[0].status == .pending)
        #expect(!(try await recordedEvents(stored.id)).contains("webhook.received"))

        // Verified: the mock's ledger says succeeded, and the session completes.
        let outcome = try await gateway.webhook(provider: "mock", headers: signed(body), body: body)
        #expect(outcome == .applied(AttemptRef(sessionID: session.session.id, attemptID: pending.id)))
        stored = try await gateway.session(session.session.id).session
        #expect(stored.attempts[0].status == .succeeded)
        #expect(stored.status == .completed)

        // The provider resends it: nothing happens twice.
        #expect(try await gateway.webhook(provider: "mock", headers: signed(body), body: body) == .duplicate)
        let recorded = try await recordedEvents(stored.id)
        #expect(recorded.filter { $0 == "webhook.received" }.count == 1)
        #expect(recorded.filter { $0 == "attempt.succeeded" }.count == 1)
        await gateway.shutdown()
    }
}
