import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import TestSupport
import Testing

/// The Tabby adapter through the real host (dlopen, bridge, engine) against
/// the simulator: the hosted-page flow on each region's host, pre-scoring and
/// payer refusals, expiry, lost answers reconciled without charging twice,
/// back-office operations and webhooks.
@Suite("Tabby adapter through the host", .heavy)
struct TabbyAdapterTests {
    static let back = "https://shop.example/return"
    static let buyer = Payer(name: "Sara Al-Harbi", email: "otp.success@tabby.ai", phone: "+966500000001")

    func withGateway(_ body: (SandboxGateway, TabbySimulator) async throws -> Void) async throws {
        try await SandboxGateway.run(simulator: "tabby", body)
    }

    /// A session and a Tabby attempt, pending at the hosted page.
    func start(_ fx: SandboxGateway, amount: Money = Money(value: 25000, currency: "SAR"), country: String = "SA",
               payer: Payer = TabbyAdapterTests.buyer, capture: CaptureMode = .automatic) async throws -> StartedAttempt {
        try await fx.start(NewSession(amount: amount, country: country, orderId: "order-\(UUID().uuidString.prefix(8))", payer: payer, capture: capture,
                                      returnUrl: Self.back),
                           NewAttempt(method: "tabby", provider: "tabby"))
    }

    /// The payer's step on the hosted page, then the return to the shop.
    func pay(_ fx: SandboxGateway, _ started: StartedAttempt, outcome: String = "approve") async throws -> Attempt {
        try await fx.payOnHostedPage(started, outcome: outcome, returnPrefix: Self.back + "?tabby_return=")
    }

    /// Tabby's payment id, from the attempt's provider reference.
    static func paymentId(_ attempt: Attempt) throws -> String {
        try #require(attempt.providerReference?.split(separator: ":").last.map(String.init))
    }

    /// Two refunds whose merchant keys are 255 characters and differ only
    /// in their last: each moves money under a `reference_id` of its own, 40
    /// hex characters whatever the key's length (Tabby documents none). The
    /// first's answer is lost: its retry reaches the adapter again (nothing
    /// was recorded) and is answered from the payment, moving nothing.
    @Test func refundsUnderLongKeysEachGetAShortReferenceOfTheirOwn() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx))
            let stem = String(repeating: "k", count: 254)
            fx.sandbox.faults.add(.init(provider: "tabby", path: "/sa/api/v2/payments/", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: stem + "1") }
            let first = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: stem + "1")
            #expect(first.balance.refunded == 5000)
            let second = try await fx.gateway.refund(payment: paid.id, amount: 3000, idempotencyKey: stem + "2")
            #expect(second.balance.refunded == 8000)
            let references = simulator.referenceIds(ofPayment: try Self.paymentId(paid))
            #expect(references.refunds.count == 2, "\(references)")
            #expect(Set(references.refunds).count == 2)
            #expect(references.refunds.allSatisfy { $0.count == 40 && $0.allSatisfy(\.isHexDigit) }, "\(references)")
            #expect(references.captures.allSatisfy { $0.count <= 40 }, "\(references)")
        }
    }

    @Test func aSaudiPaymentRedirectsToTabbyAndIsCapturedOnlyOnceTabbySaysAuthorized() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            #expect(started.attempt.action?.type == .redirect)
            #expect(started.attempt.action?.expiresAt != nil)
            #expect(started.attempt.action?.url?.contains("/tabby/checkout/") == true)
            #expect(started.attempt.providerReference?.hasPrefix("sa:automatic:") == true)
            // A return before paying, with made-up parameters, changes nothing.
            let early = try await fx.gateway.proceed(session: started.session, attempt: started.attempt.id,
                                                     PayerInput(returnParams: ["tabby_return": "success", "payment_id": "forged"]))
            #expect(early.status == .pending)
            #expect(simulator.charges == 0)
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(paid.providerStatus == "CLOSED")
            #expect(simulator.charges == 1)
            #expect(simulator.status(ofPayment: try Self.paymentId(paid)) == "CLOSED")
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: "refund-1")
            #expect(refund.balance.refunded == 5000)
        }
    }

    @Test func aKuwaitiDinarPaymentGoesToTheUAEHostWithThreeDecimals() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, amount: Money(value: 1234, currency: "KWD"), country: "KW",
                                          payer: Payer(name: "Fahad", email: "otp.success@tabby.ai", phone: "+96590000001"))
            #expect(started.attempt.providerReference?.hasPrefix("ai:") == true)
            let page = try await fx.get(try #require(started.attempt.action?.url))
            #expect(page.body.contains("1.234 KWD"))
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(paid.balance?.captured == 1234)
            #expect(simulator.charges == 1)
        }
    }

    @Test func anEmiratiDirhamPaymentGoesToTheUAEHost() async throws {
        try await withGateway { fx, _ in
            let started = try await start(fx, amount: Money(value: 15000, currency: "AED"), country: "AE",
                                          payer: Payer(email: "otp.success@tabby.ai", phone: "+971500000001"))
            #expect(started.attempt.providerReference?.hasPrefix("ai:") == true)
            #expect(try await pay(fx, started).status == .succeeded)
        }
    }

    @Test func aManualCapturePaymentIsAuthorizedThenCapturedAndRefunded() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            #expect(paid.status == .authorized)
            #expect(simulator.charges == 0)
            let capture = try await fx.gateway.capture(payment: paid.id, amount: 25000, idempotencyKey: "cap-1")
            #expect(capture.balance.captured == 25000)
            #expect(simulator.charges == 1)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 25000, idempotencyKey: "ref-1")
            #expect(refund.balance.refunded == 25000)
        }
    }

    @Test func anUncapturedAuthorizationIsVoidedByClosingIt() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            let void = try await fx.gateway.void(payment: paid.id, idempotencyKey: "void-1")
            #expect(void.balance.capturable == 0)
            #expect(simulator.status(ofPayment: try Self.paymentId(paid)) == "CLOSED")
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-after-void") }
            #expect(simulator.charges == 0)
        }
    }

    @Test func aBuyerRejectedByPreScoringFailsAsBNPLDeclinedAndIsSafeToRetryElsewhere() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 25000, currency: "SAR"), country: "SA", orderId: "order-rejected",
                payer: Payer(email: "otp.rejected@tabby.ai", phone: "+966500000002"), returnUrl: Self.back))
            _ = try? await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "tabby", provider: "tabby"))
            let tabby = try await fx.attempt(by: "tabby", inSession: session.session.id)
            #expect(tabby.status == .failed)
            #expect(tabby.problem?.code == .bnplDeclined)
            #expect(tabby.problem?.providerCode == "not_available")
            #expect(simulator.charges == 0)
        }
    }

    @Test(arguments: [("decline", AttemptStatus.failed, "bnpl_declined"), ("cancel", AttemptStatus.cancelled, "user_cancelled")])
    func aRefusalOnTheHostedPageIsNotCharged(outcome: String, status: AttemptStatus, problem: String) async throws {
        try await withGateway { fx, simulator in
            let result = try await pay(fx, try await start(fx), outcome: outcome)
            #expect(result.status == status)
            #expect(result.problem?.code.rawValue == problem)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aPaymentLeftUnapprovedForThirtyMinutesFailsAsExpired() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            simulator.age(payment: try Self.paymentId(started.attempt), by: 30 * 60)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .failed)
            #expect(verified.problem?.code == .expired)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aDroppedPaymentQueryLeavesThePaymentPendingAndVerifyCapturesItOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            fx.sandbox.faults.add(.init(provider: "tabby", path: "/sa/api/v2/payments/", method: "GET", fault: .drop))
            let returned = try await fx.returnWithoutParameters(started)
            #expect(returned.status == .pending)
            #expect(simulator.charges == 0)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aTimedOutCaptureLeavesThePaymentPendingAndVerifyFindsItCapturedOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            // Longer than the request timeout (SandboxGateway.requestTimeout): the capture happens, its answer is lost.
            fx.sandbox.faults.add(.init(provider: "tabby", path: "/sa/api/v2/payments/", method: "POST", fault: .latency(milliseconds: SandboxGateway.pastRequestTimeout)))
            let returned = try await fx.returnWithoutParameters(started)
            #expect(returned.status == .pending)
            #expect(simulator.charges == 1)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aDroppedCaptureRetriedUnderTheSameKeyCapturesOnce() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            fx.sandbox.faults.add(.init(provider: "tabby", path: "/sa/api/v2/payments/", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop") }
            #expect(simulator.charges == 1)
            let retried = try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop")
            #expect(retried.balance.captured == 25000)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aLostCheckoutSessionChargesNothingAndMayGoElsewhere() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 25000, currency: "SAR"), country: "SA", orderId: "order-lost", payer: Self.buyer, returnUrl: Self.back))
            fx.sandbox.faults.add(.init(provider: "tabby", path: "/sa/api/v2/checkout", method: "POST", fault: .drop))
            _ = try? await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "tabby", provider: "tabby"))
            let tabby = try await fx.attempt(by: "tabby", inSession: session.session.id)
            #expect(tabby.status == .failed)
            #expect(tabby.problem?.code == .providerError)
            #expect(simulator.charges == 0)
        }
    }

    /// The capture mode travels in the payment's meta; a payment without it
    /// is never captured on a notification's word, whatever the session wanted.
    @Test func aWebhookForAPaymentWithoutItsCaptureModeCapturesNothing() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            try await fx.approveOnHostedPage(started)
            let id = try Self.paymentId(started.attempt)
            #expect(simulator.forgetMeta(ofPayment: id))
            let hook = try #require(simulator.webhook(forPayment: id))
            _ = try await fx.gateway.webhook(provider: "tabby", headers: hook.headers, body: hook.body)
            #expect(simulator.charges == 0)
            #expect(simulator.status(ofPayment: id) == "AUTHORIZED")
            // The host's verify, whose reference carries the mode, settles it as a held authorization.
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .authorized)
            #expect(simulator.charges == 0)
        }
    }

    /// A test setup (`config.sandbox` true) may run without the registered
    /// header; it then takes no notification on trust: even one about a real
    /// payment is refused, and nothing is captured on its word.
    @Test func withoutARegisteredWebhookHeaderEveryNotificationIsRefused() async throws {
        let fx = try await SandboxGateway.start(configure: { $0.reconcileInterval = .seconds(3600) }) { folder in
            let url = folder.appendingPathComponent("tabby.json")
            var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            var sandbox = try #require(manifest["sandbox"] as? [String: Any])
            var config = try #require(sandbox["config"] as? [String: Any])
            config.removeValue(forKey: "webhook_header")
            config["sandbox"] = true
            sandbox["config"] = config
            manifest["sandbox"] = sandbox
            try JSONSerialization.data(withJSONObject: manifest).write(to: url)
        }
        do {
            let simulator: TabbySimulator = try fx.simulator("tabby")
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            let hook = try #require(simulator.webhook(forPayment: try Self.paymentId(started.attempt)))
            await #expect { try await fx.gateway.webhook(provider: "tabby", headers: hook.headers, body: hook.body) } throws: {
                ($0 as? Problem)?.code == .webhookUnverified
            }
            #expect(simulator.charges == 0)
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .pending)
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }

    @Test func aWebhookIsConfirmedByFetchingThePaymentAndAForgedOneIsRefused() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            let id = try Self.paymentId(started.attempt)
            let hook = try #require(simulator.webhook(forPayment: id))

            let wrongHeader = try #require(simulator.webhook(forPayment: id, headerValue: "guessed"))
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "tabby", headers: wrongHeader.headers, body: wrongHeader.body) }
            // The right header, but a payment Tabby never made.
            let invented = String(decoding: hook.body, as: UTF8.self).replacingOccurrences(of: id, with: "0badf00d-0000-4000-8000-000000000000")
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "tabby", headers: hook.headers, body: Data(invented.utf8)) }
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .pending)
            #expect(simulator.charges == 0)

            let outcome = try await fx.gateway.webhook(provider: "tabby", headers: hook.headers, body: hook.body)
            #expect(outcome == .applied(AttemptRef(sessionID: started.session, attemptID: started.attempt.id)))
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .succeeded)
            #expect(simulator.charges == 1)
            // A later verify finds it settled, and captures nothing again.
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }
}
