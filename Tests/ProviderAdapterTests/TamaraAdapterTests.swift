import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import ProviderSandbox
import TestSupport
import Testing

/// The Tamara adapter through the real host (dlopen, bridge, engine) against
/// the simulator: the approval flow with authorise and capture, every order
/// status it maps, lost answers reconciled without charging twice, and
/// JWT-signed notifications.
@Suite("Tamara adapter through the host", .heavy)
struct TamaraAdapterTests {
    static let back = "https://shop.example/return"
    static let address: [String: JSONValue] = ["shipping_address": .object(["line1": .string("3764 Al Urubah Rd"), "city": .string("Riyadh")])]

    func withGateway(_ body: (SandboxGateway, TamaraSimulator) async throws -> Void) async throws {
        try await SandboxGateway.run(simulator: "tamara", body)
    }

    /// A session and a Tamara attempt, pending at the approval page.
    func start(_ fx: SandboxGateway, amount: Money = Money(value: 30000, currency: "SAR"), country: String = "SA",
               capture: CaptureMode = .automatic) async throws -> StartedAttempt {
        try await fx.start(NewSession(amount: amount, country: country, orderId: "order-\(UUID().uuidString.prefix(8))",
                                      payer: Payer(name: "Mona Lisa", email: "mona@example.com", phone: "566027755"), capture: capture, returnUrl: Self.back),
                           NewAttempt(method: "tamara", provider: "tamara", instrument: Self.address))
    }

    /// The payer's step on the approval page, then the return to the shop with what Tamara appended.
    func pay(_ fx: SandboxGateway, _ started: StartedAttempt, outcome: String = "approve") async throws -> Attempt {
        try await fx.payOnHostedPage(started, outcome: outcome, returnPrefix: Self.back + "?orderId=")
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    static func orderId(_ attempt: Attempt) throws -> String {
        let parts = try #require(attempt.providerReference?.split(separator: ":").map(String.init))
        try #require(parts.count == 3)
        return parts[1]
    }

    @Test func anApprovedOrderIsAuthorisedAndCapturedOnlyOnceTheOrderSaysApproved() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            #expect(started.attempt.action?.type == .redirect)
            #expect(started.attempt.action?.url?.contains("/tamara/checkout/") == true)
            let orderId = try Self.orderId(started.attempt)
            // A return before approving, claiming approval, changes nothing.
            let early = try await fx.gateway.proceed(session: started.session, attempt: started.attempt.id,
                                                     PayerInput(returnParams: ["orderId": orderId, "paymentStatus": "approved"]))
            #expect(early.status == .pending)
            #expect(simulator.status(ofOrder: orderId) == "new")
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(paid.providerStatus == "fully_captured")
            #expect(simulator.status(ofOrder: orderId) == "fully_captured")
            #expect(simulator.charges == 1)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 10050, idempotencyKey: "refund-1")
            #expect(refund.amount == Money(value: 10050, currency: "SAR"))
            #expect(simulator.status(ofOrder: orderId) == "partially_refunded")
        }
    }

    @Test func aManualCaptureOrderIsAuthorisedThenCapturedAndRefunded() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            let paid = try await pay(fx, started)
            #expect(paid.status == .authorized)
            #expect(simulator.status(ofOrder: try Self.orderId(started.attempt)) == "authorised")
            #expect(simulator.charges == 0)
            let capture = try await fx.gateway.capture(payment: paid.id, amount: 12000, idempotencyKey: "cap-1")
            #expect(capture.balance.captured == 12000)
            #expect(simulator.charges == 1)
            #expect(simulator.status(ofOrder: try Self.orderId(started.attempt)) == "partially_captured")
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 12000, idempotencyKey: "ref-1")
            #expect(refund.balance.refunded == 12000)
        }
    }

    @Test func anUncapturedAuthorisationIsCanceledAtTamara() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            let paid = try await pay(fx, started)
            let void = try await fx.gateway.void(payment: paid.id, idempotencyKey: "void-1")
            #expect(void.balance.capturable == 0)
            #expect(simulator.status(ofOrder: try Self.orderId(started.attempt)) == "canceled")
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-after-void") }
            #expect(simulator.charges == 0)
        }
    }

    @Test func aKuwaitiDinarOrderIsSentWithThreeDecimals() async throws {
        try await withGateway { fx, _ in
            let started = try await start(fx, amount: Money(value: 1234, currency: "KWD"), country: "KW")
            let page = try await fx.get(try #require(started.attempt.action?.url))
            #expect(page.body.contains("1.234 KWD"))
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(paid.balance?.captured == 1234)
        }
    }

    @Test func aDeclinedOrderFailsAsABNPLRefusalThatMayGoElsewhere() async throws {
        try await withGateway { fx, simulator in
            let result = try await pay(fx, try await start(fx), outcome: "decline")
            #expect(result.status == .failed)
            #expect(result.problem?.code == .bnplDeclined)
            #expect(result.providerStatus == "declined")
            #expect(simulator.charges == 0)
        }
    }

    @Test func aPayerWhoCancelsHasTheCheckoutVoidedAndTheAttemptCancelled() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let result = try await pay(fx, started, outcome: "cancel")
            #expect(result.status == .cancelled)
            #expect(result.problem?.code == .userCancelled)
            #expect(simulator.status(ofOrder: try Self.orderId(started.attempt)) == "canceled")
            // The voided checkout cannot be approved any more.
            let late = try await fx.payerStep(try #require(started.attempt.action?.url), outcome: "approve")
            #expect(late.location?.hasSuffix("paymentStatus=canceled") == true)
            #expect(simulator.charges == 0)
        }
    }

    @Test func anOrderNeverApprovedExpiresAndVerifyFailsIt() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(try await fx.gateway.verify(attempt: started.attempt.id).status == .pending)
            simulator.age(order: try Self.orderId(started.attempt), by: 31 * 60)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .failed)
            #expect(verified.problem?.code == .expired)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aCheckoutTamaraRefusesFailsBeforeAnythingIsCharged() async throws {
        try await withGateway { fx, simulator in
            // Saudi riyals in Kuwait: Tamara refuses the currency for the country.
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 30000, currency: "SAR"), country: "KW", orderId: "order-refused",
                payer: Payer(name: "Mona Lisa", phone: "566027755"), returnUrl: Self.back))
            _ = try? await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "tamara", provider: "tamara", instrument: Self.address))
            let tamara = try await fx.attempt(by: "tamara", inSession: session.session.id)
            #expect(tamara.status == .failed)
            #expect(tamara.problem?.code == .providerError)
            #expect(tamara.problem?.providerCode == "currency_not_supported_for_country")
            #expect(simulator.charges == 0)
        }
    }

    @Test func aLostCheckoutSessionChargesNothingAndMayGoElsewhere() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 30000, currency: "SAR"), country: "SA", orderId: "order-lost",
                payer: Payer(name: "Mona Lisa", phone: "566027755"), returnUrl: Self.back))
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/checkout", method: "POST", fault: .drop))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "tamara", instrument: Self.address))
            let tamara = try await fx.attempt(by: "tamara", inSession: session.session.id)
            #expect(tamara.status == .failed)
            #expect(tamara.problem?.code == .providerError)
            #expect(attempt.providerID != "tamara")
            #expect(simulator.charges == 0)
            // The order the lost answer made was found under its reference (the payment id).
            let made = try #require(simulator.orderId(forReference: tamara.id))
            #expect(tamara.problem?.detail.contains("Tamara made order \(made) (new), whose checkout never reached the payer") == true,
                    "\(String(describing: tamara.problem))")
        }
    }

    /// The order id as `order_number` and in the description, cut to 128
    /// characters (labels only: the order is found by its reference, the
    /// payment id); the simulator takes up to 255.
    @Test(arguments: [128, 129, 300])
    func anOrderIdIsCutTo128CharactersAsALabel(length: Int) async throws {
        try await withGateway { fx, simulator in
            let orderId = String(repeating: "t", count: length)
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 30000, currency: "SAR"), country: "SA", orderId: orderId,
                payer: Payer(name: "Mona Lisa", email: "mona@example.com", phone: "566027755"), returnUrl: Self.back))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "tamara", provider: "tamara", instrument: Self.address))
            #expect(attempt.status == .pending, "\(String(describing: attempt.problem))")
            let labels = try #require(simulator.labels(ofOrder: try Self.orderId(attempt)))
            #expect(labels.orderNumber == String(orderId.prefix(128)))
        }
    }

    /// Verify of an attempt that has no order (its checkout answer was
    /// lost) reads Tamara's order under the payment id: an order the payer
    /// approved is settled, never captured unasked; none is not created; a
    /// read without an answer leaves the outcome unknown.
    @Test func anAttemptWithoutAnOrderIsSettledByTheOrderUnderItsReference() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            let paid = try await pay(fx, started)
            #expect(paid.status == .authorized)
            let orderId = try Self.orderId(paid)
            let adapter = try #require(fx.gateway.providerRecords.first { $0.id == "tamara" }?.adapter)

            let found = try await adapter.call(.verify, VerifyRequest(paymentId: started.attempt.id, providerReference: nil))
            #expect(found.status == .authorized)
            #expect(found.providerReference == "manual:\(orderId):by-reference")
            #expect(found.amount == Money(value: 30000, currency: "SAR"))
            #expect(simulator.status(ofOrder: orderId) == "authorised", "found, not captured")

            let none = try await adapter.call(.verify, VerifyRequest(paymentId: "att_never_sent", providerReference: nil))
            #expect(none.status == .failed)
            #expect(none.problem?.message.contains("holds no order under reference att_never_sent") == true, "\(String(describing: none.problem))")

            fx.sandbox.faults.add(.init(provider: "tamara", path: "/merchants/orders/reference-id/", method: "GET", fault: .status(503)))
            do {
                _ = try await adapter.call(.verify, VerifyRequest(paymentId: started.attempt.id, providerReference: nil))
                Issue.record("a read without an answer settled the attempt")
            } catch let error as AdapterCallError {
                #expect(error.outcomeUnknown, "\(error)")
                #expect(error.description.contains("no order, and reading an order under reference"), "\(error)")
            }
            #expect(simulator.charges == 0)
        }
    }

    @Test func aDroppedCaptureAnswerLeavesThePaymentPendingAndVerifyFindsItChargedOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/payments/capture", method: "POST", fault: .drop))
            let returned = try await pay(fx, started)
            #expect(returned.status == .pending)
            #expect(simulator.charges == 1)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aTimedOutOrderQueryLeavesThePaymentPendingAndVerifyFindsIt() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            // Longer than the request timeout (SandboxGateway.requestTimeout): the host gives up on the answer.
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/orders/", method: "GET", fault: .latency(milliseconds: SandboxGateway.pastRequestTimeout)))
            let returned = try await pay(fx, started)
            #expect(returned.status == .pending)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aDroppedManualCaptureRetriedUnderTheSameKeyCapturesOnce() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/payments/capture", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop") }
            #expect(simulator.charges == 1)
            let retried = try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop")
            #expect(retried.balance.captured == 30000)
            #expect(simulator.charges == 1)
        }
    }

    /// Tamara takes no idempotency key for captures, and after a partial
    /// capture "what is left" still allows another: the retry must find its
    /// first try in the order's captured total instead of capturing again.
    @Test func aDroppedPartialCaptureRetriedUnderTheSameKeyCapturesOnceAndTheNextCaptureStillWorks() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            let first = try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-1")
            #expect(first.balance.captured == 5000)
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/payments/capture", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, amount: 10000, idempotencyKey: "cap-2") }
            #expect(simulator.charges == 2, "the dropped capture landed at Tamara")
            let retried = try await fx.gateway.capture(payment: paid.id, amount: 10000, idempotencyKey: "cap-2")
            #expect(retried.balance.captured == 15000)
            #expect(simulator.charges == 2, "the retry did not capture a second time")
            let next = try await fx.gateway.capture(payment: paid.id, amount: 15000, idempotencyKey: "cap-3")
            #expect(next.balance.captured == 30000)
            #expect(simulator.charges == 3)
        }
    }

    /// Finding 6: capture A lands but its answer is lost; capture B used to
    /// infer from totals that "an earlier try landed" and report success
    /// without capturing, and A's retry then captured again.
    @Test func overlappingPartialCapturesNeverOverCapture() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/payments/capture", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-a") }
            #expect(simulator.charges == 1, "capture A landed at Tamara")
            await #expect { try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-b") } throws: {
                ($0 as? Problem)?.code == .operationInProgress
            }
            #expect(simulator.charges == 1)
            let a = try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-a")
            #expect(a.balance.captured == 5000)
            #expect(simulator.charges == 1, "A's retry found A, and captured nothing more")
            let b = try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-b")
            #expect(b.balance.captured == 10000)
            #expect(simulator.charges == 2, "Tamara captured exactly A and B")
        }
    }

    @Test func aSignedApprovedNotificationSettlesThePaymentAndForgedOnesAreRefused() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let orderId = try Self.orderId(started.attempt)
            try await fx.approveOnHostedPage(started)
            let note = try #require(simulator.notification(forOrder: orderId))

            let otherKey = try #require(simulator.notification(forOrder: orderId, key: "not-the-notification-token"))
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "tamara", headers: otherKey.headers, body: otherKey.body) }
            let expired = try #require(simulator.notification(forOrder: orderId, lifetime: -3600))
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "tamara", headers: expired.headers, body: expired.body) }
            let parts = note.token.split(separator: ".").map(String.init)
            let none = Self.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
            await #expect(throws: Problem.self) {
                try await fx.gateway.webhook(provider: "tamara", headers: ["Authorization": "Bearer \(none).\(parts[1])."], body: note.body)
            }
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "tamara", headers: [:], body: note.body) }
            // Correctly keyed, but claiming another algorithm: the token may not choose how it is checked.
            let hs384 = Self.base64URL(Data(#"{"alg":"HS384","typ":"JWT"}"#.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data((hs384 + "." + parts[1]).utf8),
                                                      using: SymmetricKey(data: Data(TamaraSimulator.notificationToken.utf8)))
            await #expect(throws: Problem.self) {
                try await fx.gateway.webhook(provider: "tamara", headers: ["Authorization": "Bearer \(hs384).\(parts[1]).\(Self.base64URL(Data(mac)))"], body: note.body)
            }
            #expect(simulator.status(ofOrder: orderId) == "approved")
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .pending)

            let outcome = try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: note.body)
            #expect(outcome == .applied(AttemptRef(sessionID: started.session, attemptID: started.attempt.id)))
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .succeeded)
            #expect(simulator.status(ofOrder: orderId) == "fully_captured")
            #expect(try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: note.body) == .duplicate)
            // The payer's late return finds it settled and takes nothing more.
            _ = try? await fx.returnWithoutParameters(started)
            #expect(simulator.charges == 1)
        }
    }

    @Test func anApprovedNotificationForAManualCaptureOrderAuthorisesIt() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            let orderId = try Self.orderId(started.attempt)
            try await fx.approveOnHostedPage(started)
            let note = try #require(simulator.notification(forOrder: orderId))
            _ = try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: note.body)
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .authorized)
            #expect(simulator.status(ofOrder: orderId) == "authorised")
            #expect(simulator.charges == 0)
        }
    }

    /// With a token that names no order (the bare `iat`/`iss` shape), the
    /// body says which order to read.
    @Test func aSignedNotificationAboutAnOrderTamaraDoesNotKnowIsAcknowledgedAndIgnored() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let orderId = try Self.orderId(started.attempt)
            try await fx.approveOnHostedPage(started)
            let note = try #require(simulator.notification(forOrder: orderId, signsContent: false))
            let body = String(decoding: note.body, as: UTF8.self).replacingOccurrences(of: orderId, with: "00000000-0000-4000-8000-000000000000")
            let outcome = try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: Data(body.utf8))
            guard case .ignored = outcome else { Issue.record("expected the notification to be ignored, got \(outcome)"); return }
            #expect(simulator.status(ofOrder: orderId) == "approved")
        }
    }

    /// Two deliveries of one signed notification are one event, whatever
    /// their unsigned bodies say: here the second lacks `event_type` and
    /// claims another `order_status` and `order_number`, which the event id
    /// used to be made of.
    @Test func aSignedNotificationIsOneEventWhateverItsUnsignedBodySays() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, capture: .manual)
            let orderId = try Self.orderId(started.attempt)
            try await fx.approveOnHostedPage(started)
            let note = try #require(simulator.notification(forOrder: orderId))
            let first = try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: note.body)
            #expect(first == .applied(AttemptRef(sessionID: started.session, attemptID: started.attempt.id)))
            var body = try #require(try JSONSerialization.jsonObject(with: note.body) as? [String: Any])
            body.removeValue(forKey: "event_type")
            body["order_status"] = "authorised"
            body["order_number"] = "forged-\(UUID().uuidString.prefix(8))"
            let rewritten = try JSONSerialization.data(withJSONObject: body)
            #expect(try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: rewritten) == .duplicate)
        }
    }

    /// A body naming another order (or event) than the one its token signs
    /// is refused, and nothing is done to the order it named: a captured
    /// token cannot be replayed against another payment.
    @Test func aBodyThatDisagreesWithItsSignedTokenIsRefused() async throws {
        try await withGateway { fx, simulator in
            let signed = try await start(fx)
            let signedOrder = try Self.orderId(signed.attempt)
            try await fx.approveOnHostedPage(signed)
            let note = try #require(simulator.notification(forOrder: signedOrder))
            let target = try await start(fx)
            let targetOrder = try Self.orderId(target.attempt)
            try await fx.approveOnHostedPage(target)
            let otherOrder = String(decoding: note.body, as: UTF8.self).replacingOccurrences(of: signedOrder, with: targetOrder)
            await #expect { try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: Data(otherOrder.utf8)) } throws: {
                ($0 as? Problem)?.code == .webhookUnverified
            }
            #expect(simulator.status(ofOrder: targetOrder) == "approved", "the order the body named was not touched")
            #expect(try await fx.gateway.session(target.session).session.attempts[0].status == .pending)
            let otherEvent = String(decoding: note.body, as: UTF8.self).replacingOccurrences(of: "order_approved", with: "order_canceled")
            await #expect { try await fx.gateway.webhook(provider: "tamara", headers: note.headers, body: Data(otherEvent.utf8)) } throws: {
                ($0 as? Problem)?.code == .webhookUnverified
            }
            #expect(try await fx.gateway.session(signed.session).session.attempts[0].status == .pending)
        }
    }

    /// With tokens that sign no order, a replayed token under a body naming
    /// another order cannot take that order's event id: the order's own
    /// notification, when it comes, still settles it.
    @Test func aReplayedTokenUnderAForgedBodyCannotSilenceTheNamedOrdersOwnNotification() async throws {
        try await withGateway { fx, simulator in
            let other = try await start(fx)
            let otherOrder = try Self.orderId(other.attempt)
            try await fx.approveOnHostedPage(other)
            let replayed = try #require(simulator.notification(forOrder: otherOrder, signsContent: false))
            let target = try await start(fx)
            let targetOrder = try Self.orderId(target.attempt)
            let forged = String(decoding: replayed.body, as: UTF8.self).replacingOccurrences(of: otherOrder, with: targetOrder)
            _ = try await fx.gateway.webhook(provider: "tamara", headers: replayed.headers, body: Data(forged.utf8))
            #expect(try await fx.gateway.session(target.session).session.attempts[0].status == .pending)
            #expect(simulator.status(ofOrder: targetOrder) == "new")

            try await fx.approveOnHostedPage(target)
            let genuine = try #require(simulator.notification(forOrder: targetOrder, signsContent: false))
            let outcome = try await fx.gateway.webhook(provider: "tamara", headers: genuine.headers, body: genuine.body)
            #expect(outcome == .applied(AttemptRef(sessionID: target.session, attemptID: target.attempt.id)))
            #expect(try await fx.gateway.session(target.session).session.attempts[0].status == .succeeded)
            #expect(simulator.status(ofOrder: targetOrder) == "fully_captured")
        }
    }
}
