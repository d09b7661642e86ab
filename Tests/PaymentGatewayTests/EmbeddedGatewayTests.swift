import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import ServiceLifecycle
import TestSupport
import Testing

/// The embeddable gateway, as an app holds it: shipped manifests, the real
/// mock adapter, SQLite in a scratch folder.
@Suite struct EmbeddedGatewayTests {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-embedded-\(UUID().uuidString)")

    func gateway() async throws -> PaymentGateway {
        var configuration = PaymentGateway.Configuration(manifests: BuildProducts.shippedManifests.path, data: data.path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        return try await PaymentGateway.open(configuration: configuration)
    }

    @Test func threeDSecureThroughTheRealAdapterWithEvents() async throws {
        let gateway = try await gateway()
        let session = try await gateway.createSession(NewSession(amount: Money(value: 5000, currency: "SAR"), country: "SA", orderId: "o-1"))
        #expect(session.availableMethods.contains("mada"))
        let events = try await gateway.events(ofSession: session.session.id)
        let pending = try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "mock", instrument: ["scenario": .string("three_ds")]))
        #expect(pending.status == .pending && pending.action?.type == .threeDS)
        let done = try await gateway.proceed(session: session.session.id, attempt: pending.id, PayerInput(returnParams: ["outcome": "approve"]))
        #expect(done.status == .succeeded)
        var types: [SessionEvent.Kind] = []
        for try await event in events {
            types.append(event.type)
            if event.type == .sessionCompleted { break }
        }
        #expect(types == ["session.created", "attempt.started", "attempt.pending", "attempt.succeeded", "session.completed"])
        let refund = try await gateway.refund(payment: done.id, amount: 2000, idempotencyKey: "r-1")
        #expect(refund.balance.refunded == 2000)
        await gateway.shutdown()
    }

    @Test func manualCaptureVoidAndRefundLimitsThroughTheMock() async throws {
        let gateway = try await gateway()
        let session = try await gateway.createSession(NewSession(amount: Money(value: 1234, currency: "KWD"), country: "KW", orderId: "o-2", capture: .manual))
        let authorized = try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa"))
        #expect(authorized.status == .authorized)
        _ = try await gateway.capture(payment: authorized.id, amount: 1000, idempotencyKey: "op-1")
        await #expect { try await gateway.refund(payment: authorized.id, amount: 1001, idempotencyKey: "op-2") } throws: { ($0 as? Problem)?.code == .invalidRequest }
        await #expect { try await gateway.void(payment: authorized.id, idempotencyKey: "op-3") } throws: { ($0 as? Problem)?.code == .invalidState }
        await gateway.shutdown()
    }

    /// A request the adapter refuses as invalid (here an unknown mock
    /// scenario) is the merchant's fault: the attempt fails with
    /// `invalid_request`, no other provider is tried, and however many come,
    /// the provider's circuit stays closed for everyone else.
    @Test func invalidRequestsNeverOpenTheProvidersCircuit() async throws {
        let gateway = try await gateway()
        let threshold = gateway.configuration.checkout.breakerThreshold
        for i in 0...threshold {
            let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "bad-\(i)"))
            let attempt = try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", instrument: ["scenario": .string("no_such_scenario")]))
            #expect(attempt.status == .failed)
            #expect(attempt.problem?.code == .invalidRequest)
            #expect(attempt.problem?.retryable == false)
            #expect(try await gateway.session(session.session.id).session.attempts.count == 1, "no failover on an invalid request")
        }
        #expect(gateway.checkout.circuitStates()["mock"] == .closed)
        let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "good"))
        #expect(session.availableMethods.contains("mada"))
        #expect(try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada")).status == .succeeded)
        await gateway.shutdown()
    }

    @Test func itRunsAsAServiceUntilGracefulShutdown() async throws {
        let gateway = try await gateway()
        let group = ServiceGroup(configuration: .init(services: [gateway], logger: .init(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), orderId: "o-3"))
            // pending_then_success: the running service's reconciler finalises it.
            let pending = try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada", instrument: ["scenario": .string("pending_then_success")]))
            #expect(pending.status == .pending)
            var status = pending.status
            for _ in 0..<100 where status == .pending {
                try await Task.sleep(for: .milliseconds(100))
                status = try await gateway.session(session.session.id).session.attempts[0].status
            }
            #expect(status == .succeeded)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func theManifestBecomesTheRoutingProfile() throws {
        let manifest = try ManifestFile.read(BuildProducts.shippedManifests.appendingPathComponent("mock.json")).get()
        let profile = ProviderProfile(manifest: manifest)
        let sar = { (v: Int64) in Money(value: v, currency: "SAR") }
        #expect(profile.refusal(method: "mada", amount: sar(100), country: "SA", capture: .automatic) == nil)
        #expect(profile.refusal(method: "mada", amount: sar(99), country: "SA", capture: .automatic)?.contains("limits") == true)
        #expect(profile.refusal(method: "mada", amount: Money(value: 1000, currency: "XXX"), country: "SA", capture: .automatic) != nil)
        #expect(profile.refusal(method: "ideal", amount: sar(1000), country: "SA", capture: .automatic) != nil)
        #expect(profile.refusal(method: "mada", amount: sar(1000), country: "BR", capture: .automatic) != nil)
        #expect(profile.callTimeout == .milliseconds(manifest.timeoutMilliseconds))
        #expect(profile.supportsManualCapture)
    }

    @Test func theManifestsModeBecomesTheProfilesMode() throws {
        for (name, mode) in [("mock.json", PaymentMode.test), ("example-c.json", .test), ("hyperpay.json", .live), ("tamara.json", .live)] {
            let manifest = try ManifestFile.read(BuildProducts.shippedManifests.appendingPathComponent(name)).get()
            #expect(ProviderProfile(manifest: manifest).mode == mode, "\(name)")
        }
        // The mock's manifest as file format 1.0, without a mode: a live
        // profile (the engine's own default is test), never serving a test session.
        var object = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: BuildProducts.shippedManifests.appendingPathComponent("mock.json"))) as? [String: Any])
        object["file_format_version"] = "1.0.0"
        object.removeValue(forKey: "mode")
        object.removeValue(forKey: "fields")              // 1.1 too
        object.removeValue(forKey: "method_currencies")   // 1.1 too
        guard case .valid(let unmarked) = ManifestValidator.validate(try JSONSerialization.data(withJSONObject: object)) else {
            Issue.record("the 1.0 mock manifest must be valid")
            return
        }
        let profile = ProviderProfile(manifest: unmarked)
        #expect(profile.mode == .live)
        #expect(profile.refusal(method: "mada", amount: Money(value: 1000, currency: "SAR"), country: "SA", capture: .automatic, mode: .test) != nil)
    }
}
