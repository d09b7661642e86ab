import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
import PaymentFields
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import Testing
import TestSupport

/// The Worldline adapter through the real host (dlopen, bridge, engine)
/// against the simulator. The payer's device is played by
/// ``WorldlineDevice``: it fetches the public key with the session's client
/// session and encrypts the card into a JWE, which only the simulator opens,
/// so the format is proved end to end and the host never holds a card number.
@Suite("Worldline adapter through the host", .heavy)
struct WorldlineAdapterTests {
    static let back = "https://shop.example/return"

    /// The sandbox gateway, Worldline's requests given 30 s (not the
    /// sandbox's 3) and its calls 60 s: a loaded machine must not turn a call
    /// into a lost answer, nor a slow client session into none.
    func withGateway(faults: FaultPlan = FaultPlan(), requestTimeout: Int = 30_000,
                     _ body: (SandboxGateway, WorldlineSimulator) async throws -> Void) async throws {
        let fx = try await SandboxGateway.start(faults: faults, configure: { $0.reconcileInterval = .seconds(3600) }) { manifests in
            // And the call 60 s (not 25): the session's instruments wait for it at most that long.
            try ManifestText.edit(manifests.appendingPathComponent("worldline.json"),
                                  [(#""request_timeout_ms": 3000"#, #""request_timeout_ms": \#(requestTimeout)"#),
                                   (#""timeout_ms": 25000"#, #""timeout_ms": 60000"#)])
        }
        do { try await body(fx, try fx.simulator("worldline")) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    func session(_ fx: SandboxGateway, amount: Int64 = 15_000, capture: CaptureMode = .automatic, back: String = WorldlineAdapterTests.back,
                 payer: Payer? = nil) async throws -> SessionSnapshot {
        try await fx.gateway.createSession(NewSession(
            amount: Money(value: amount, currency: "EUR"), country: "BE", orderId: "o-\(UUID().uuidString.prefix(8))", payer: payer,
            capture: capture, returnUrl: back))
    }

    /// What a payer's device does with the session's Worldline client
    /// session: fetch the public key from the client API, encrypt the card.
    func encryptedCard(_ fx: SandboxGateway, _ s: SessionSnapshot, card: String, cvv: String = "123", method: String = "visa") async throws -> String {
        let offered = try #require(s.instruments[method]?.first { $0.provider == "worldline" }?.instrument, "no Worldline client session: \(s.instruments)")
        let data = try #require(offered.data)
        let (api, customer, id) = (try #require(data["clientApiUrl"]), try #require(data["customerId"]), try #require(data["clientSessionId"]))
        let key = try await fx.send("GET", api + "/v1/\(customer)/crypto/publickey", headers: [("Authorization", "GCS v1Client:" + id)])
        #expect(key.status == 200, "\(key)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(key.body.utf8)) as? [String: Any])
        return try WorldlineDevice.encryptedCustomerInput(
            publicKey: try #require(document["publicKey"] as? String), keyId: try #require(document["keyId"] as? String), clientSessionId: id,
            paymentProductId: method == "mastercard" ? 3 : method == "amex" ? 2 : 1, cardNumber: card, expiryDate: "1230", cvv: cvv,
            cardholderName: "Lina Peeters")
    }

    /// Pays with `card` (its brand's method: 5 Mastercard, 3 Amex, else Visa), encrypted by the device.
    func pay(_ fx: SandboxGateway, _ s: SessionSnapshot, card: String, cvv: String = "123") async throws -> Attempt {
        let method = card.hasPrefix("5") ? "mastercard" : card.hasPrefix("3") ? "amex" : "visa"
        let jwe = try await encryptedCard(fx, s, card: card, cvv: cvv, method: method)
        return try await fx.gateway.attempt(session: s.session.id, NewAttempt(
            method: method, provider: "worldline", instrument: ["encryptedCustomerInput": .string(jwe)]))
    }

    // MARK: Signature

    /// `GCS v1HMAC` as the provider documents it, written here on its own
    /// (not the adapter's or the simulator's code).
    static func gcsSignature(method: String, contentType: String?, date: String, gcsHeaders: [String: String], path: String, secret: String) -> String {
        var text = "\(method)\n\(contentType ?? "")\n\(date)\n"
        for name in gcsHeaders.keys.sorted() { text += "\(name.lowercased()):\(gcsHeaders[name]!)\n" }
        text += path + "\n"
        return Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: Data(secret.utf8)))).base64EncodedString()
    }

    @Test func theTestsOwnSignatureReproducesTheWorkedExample() {
        // Computed with Python's hmac and with openssl (docs/providers.md, Worldline).
        #expect(Self.gcsSignature(method: "POST", contentType: "application/json", date: "Mon, 24 Nov 2025 10:15:00 GMT",
                                  gcsHeaders: ["x-gcs-idempotence-key": "pay_7Q2M9X-authorize-1"], path: "/v2/1234/payments",
                                  secret: "wl-sandbox-secret-3f9c2a71e8d04b56a1c7") == "8sR3R30Al1x0g02jWPZcWAWpJ4LKJG+D09Q9gSqUJOY=")
        // The SDK's own published vector.
        #expect(Self.gcsSignature(method: "GET", contentType: nil, date: "Fri, 06 Jun 2014 13:39:43 GMT", gcsHeaders: [:], path: "/v2/1/tokens/2",
                                  secret: "6Kj5HT0MQKC6D8eb7W3lTg71kVKVDSt1") == "vCos01y77soPNJOW6kDCm4Bu5b2darAZ09PP7Wa+jRA=")
    }

    @Test func thePaymentCreateIsSignedByteForByteAndCarriesTheIdempotenceKey() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let paid = try await pay(fx, s, card: "4111111111111111")
            #expect(paid.status == .succeeded, "\(paid)")
            let signed = try #require(simulator.lastSignedRequest)
            #expect(signed.method == "POST" && signed.path == "/worldline/v2/\(WorldlineSimulator.merchantID)/payments", "\(signed)")
            #expect(signed.contentType == "application/json")
            #expect(signed.gcsHeaders["x-gcs-idempotence-key"]?.isEmpty == false)
            let expected = Self.gcsSignature(method: signed.method, contentType: signed.contentType, date: signed.date, gcsHeaders: signed.gcsHeaders,
                                             path: signed.path, secret: WorldlineSimulator.apiSecret)
            #expect(signed.authorization == "GCS v1HMAC:\(WorldlineSimulator.apiKeyID):\(expected)")
            // The Date header is the host's clock as IMF-fixdate.
            #expect(signed.date.range(of: #"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$"#, options: .regularExpression) != nil)
        }
    }

    // MARK: Client session and encrypted cards

    @Test func everySessionCarriesAClientSessionTheDeviceCanUse() async throws {
        try await withGateway { fx, _ in
            let s = try await session(fx)
            for method in ["visa", "mastercard", "amex"] {
                let offered = try #require(s.instruments[method]?.first { $0.provider == "worldline" }, "\(method): \(s.instruments)")
                #expect(offered.instrument.kind == "client_session" && offered.instrument.data?["clientSessionId"]?.isEmpty == false)
                #expect(try #require(offered.instrument.expiryDate) > Date().addingTimeInterval(3600))
            }
            // The form the device renders: typed on the device, checked by the host's rules.
            #expect(s.fields["visa"]?.map(\.id) == ["cardNumber", "expiryDate", "cvv", "cardholderName"])
            #expect(s.fields["amex"]?.first { $0.id == "cvv" }?.validators == [.length(min: 4, max: 4)])
            let data = try #require(s.instruments["visa"]?.first { $0.provider == "worldline" }?.instrument.data)
            let products = try await fx.send("GET", data["clientApiUrl"]! + "/v1/\(data["customerId"]!)/products",
                                             headers: [("Authorization", "GCS v1Client:" + data["clientSessionId"]!)])
            #expect(products.status == 200 && products.body.contains("\"paymentProducts\""), "\(products)")
            // Without the session, the client API refuses.
            let refused = try await fx.send("GET", data["clientApiUrl"]! + "/v1/\(data["customerId"]!)/products",
                                            headers: [("Authorization", "GCS v1Client:not-a-session")])
            #expect(refused.status == 401)
        }
    }

    @Test func anEncryptedCardIsChargedOnceWithoutThreeDSecureAndItsNumberIsNowhere() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let paid = try await pay(fx, s, card: "4111111111111111")
            #expect(paid.status == .succeeded && paid.providerID == "worldline", "\(paid)")
            let id = try #require(paid.providerReference)
            #expect(simulator.charges == 1 && simulator.payment(id)?.status == "CAPTURED" && simulator.payment(id)?.cardLast4 == "1111")
            #expect(simulator.payment(id)?.merchantReference == paid.id)
            let again = try await fx.gateway.verify(attempt: paid.id)
            #expect(again.status == .succeeded && simulator.charges == 1)
            let number = Data("4111111111111111".utf8)
            #expect(!writtenFiles(in: fx.folder).contains { $0.data.range(of: number) != nil }, "the card number was written by the gateway")
            let text = String(decoding: DocumentCoding.encode(try await fx.gateway.session(s.session.id)), as: UTF8.self)
            #expect(!text.contains("4111111111111111"))
        }
    }

    @Test(arguments: ["5555555555554444", "378282246310005"])
    func everyBrandsEncryptedCardIsCharged(card: String) async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await session(fx), card: card)
            #expect(paid.status == .succeeded && paid.method == (card.hasPrefix("5") ? "mastercard" : "amex") && simulator.charges == 1, "\(paid)")
        }
    }

    @Test func aStoredTokenPaysServerToServer() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let paid = try await fx.gateway.attempt(session: s.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["token": .string("sandbox-token-visa")]))
            #expect(paid.status == .succeeded && simulator.charges == 1, "\(paid)")
        }
    }

    @Test func anEncryptedCardSucceedsOnlyAfterTheThreeDSecurePage() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await pay(fx, s, card: "4000000000001091")
            #expect(started.status == .pending && started.action?.type == .threeDS, "\(started)")
            let id = try #require(started.providerReference)
            // A forged early return, naming the payment, changes nothing.
            let early = try await fx.gateway.proceed(session: s.session.id, attempt: started.id,
                                                     PayerInput(returnParams: ["paymentId": id, "RETURNMAC": "forged"]))
            #expect(early.status == .pending && simulator.charges == 0)
            let step = try await fx.payerStep(try #require(started.action?.url), outcome: "approve")
            let location = try #require(step.location)
            #expect(step.status == 302 && location.hasPrefix(Self.back + "?") && location.contains("paymentId=" + id), "\(step)")
            let paid = try await fx.gateway.proceed(session: s.session.id, attempt: started.id,
                                                    PayerInput(returnParams: SandboxGateway.queryParameters(location)))
            #expect(paid.status == .succeeded && simulator.charges == 1, "\(paid)")
        }
    }

    @Test(arguments: [("decline", "authentication_failed", AttemptStatus.failed), ("cancel", "user_cancelled", AttemptStatus.cancelled)])
    func aThreeDSecurePageThatDoesNotApproveEndsTheAttempt(outcome: String, code: String, status: AttemptStatus) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await pay(fx, s, card: "5200000000001096")
            let step = try await fx.payerStep(try #require(started.action?.url), outcome: outcome)
            let ended = try await fx.gateway.proceed(session: s.session.id, attempt: started.id,
                                                     PayerInput(returnParams: SandboxGateway.queryParameters(try #require(step.location))))
            #expect(ended.status == status && ended.problem?.code.rawValue == code && simulator.charges == 0, "\(ended)")
        }
    }

    /// The merchant aborts while the payer is on the 3-D Secure page: the
    /// payment is cancelled at Worldline first, so the page can no longer
    /// charge, and only then is the session cancelled.
    @Test func abortingTheSessionCancelsAPendingThreeDSecurePayment() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await pay(fx, s, card: "4000000000001091")
            let id = try #require(started.providerReference)
            let aborted = try await fx.gateway.abort(session: s.session.id, idempotencyKey: "abort-wl")
            #expect(aborted.session.status == .cancelled && aborted.session.attempts.first?.status == .cancelled, "\(aborted.session)")
            #expect(simulator.payment(id)?.status == "CANCELLED")
            _ = try await fx.payerStep(try #require(started.action?.url), outcome: "approve")
            #expect(simulator.charges == 0 && simulator.payment(id)?.status == "CANCELLED")
        }
    }

    // MARK: Problems

    @Test(arguments: [("4000000000000515", "123", "insufficient_funds", false), ("4000000000003006", "123", "card_declined", false),
                      ("4000000000000549", "123", "card_expired", false), ("4000000000000341", "123", "fraud_detected", false),
                      ("4111111111111111", "000", "invalid_card_details", true), ("4111111111111112", "123", "invalid_card_details", true),
                      ("4000000000000598", "123", "fraud_detected", false), ("4000000000000176", "123", "expired", false),
                      ("4000000000000960", "123", "provider_error", true), ("4000000000000143", "123", "invalid_card_details", true),
                      ("4000000000001083", "123", "card_declined", false)])
    func everyDeclineMapsToItsProblem(card: String, cvv: String, code: String, retryable: Bool) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let declined = try await pay(fx, s, card: card, cvv: cvv)
            #expect(declined.status == .failed && declined.providerID == "worldline", "\(declined)")
            let problem = try #require(declined.problem)
            #expect(problem.code.rawValue == code && problem.retryable == retryable, "\(problem)")
            #expect(!problem.payerMessage.en.isEmpty && !problem.payerMessage.ar.isEmpty && problem.payerMessage.en != problem.payerMessage.ar)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aNewAttemptAfterADeclinePaysInTheSameSession() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let declined = try await pay(fx, s, card: "4000000000000515")
            #expect(declined.status == .failed)
            let paid = try await pay(fx, try await fx.gateway.session(s.session.id), card: "5555555555554444")
            #expect(paid.status == .succeeded && simulator.charges == 1, "\(paid)")
            #expect(declined.providerReference != paid.providerReference)
        }
    }

    /// Encrypted input is good once, within its client session's life.
    @Test func aReplayedOrLateEncryptedInputIsRefusedAndChargesNothing() async throws {
        try await withGateway { fx, simulator in
            let first = try await session(fx)
            let jwe = try await encryptedCard(fx, first, card: "4111111111111111")
            let paid = try await fx.gateway.attempt(session: first.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["encryptedCustomerInput": .string(jwe)]))
            #expect(paid.status == .succeeded && simulator.charges == 1)
            // The same JWE in another checkout: its nonce is used up.
            let other = try await session(fx)
            let replayed = try await fx.gateway.attempt(session: other.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["encryptedCustomerInput": .string(jwe)]))
            #expect(replayed.status == .failed && replayed.problem?.code == .invalidCardDetails && simulator.charges == 1, "\(replayed)")
            // A JWE made with a client session that has since expired.
            let late = try await session(fx)
            let stale = try await encryptedCard(fx, late, card: "4111111111111111")
            simulator.expire(clientSession: try #require(late.instruments["visa"]?.first { $0.provider == "worldline" }?.instrument.data?["clientSessionId"]))
            let refused = try await fx.gateway.attempt(session: late.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["encryptedCustomerInput": .string(stale)]))
            #expect(refused.status == .failed && simulator.charges == 1 && simulator.paymentCount == 1, "\(refused)")
        }
    }

    // MARK: Lost answers

    /// The create reaches Worldline (or not, on a 503) but its answer is
    /// lost: the attempt stays pending with no payment id, and verify
    /// replays the create under the same idempotence key, so Worldline
    /// answers the first try's payment (or makes it once): one charge.
    @Test(arguments: ["drop", "timeout", "503"])
    func aLostCreateStaysPendingAndVerifySettlesItWithOneCharge(fault: String) async throws {
        let faults = FaultPlan()
        try await withGateway(faults: faults, requestTimeout: fault == "timeout" ? SandboxGateway.requestTimeout : 30_000) { fx, simulator in
            let s = try await session(fx)
            let jwe = try await encryptedCard(fx, s, card: "4111111111111111")
            faults.add(.init(provider: "worldline", path: "/v2/\(WorldlineSimulator.merchantID)/payments", method: "POST",
                             fault: fault == "drop" ? .drop : fault == "503" ? .status(503) : .latency(milliseconds: SandboxGateway.pastRequestTimeout), count: 1))
            let lost = try await fx.gateway.attempt(session: s.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["encryptedCustomerInput": .string(jwe)]))
            #expect(lost.status == .pending && lost.providerReference == nil, "\(lost)")
            #expect(simulator.charges == (fault == "503" ? 0 : 1))
            let settled = try await fx.gateway.verify(attempt: lost.id)
            #expect(settled.status == .succeeded && settled.providerReference != nil && simulator.charges == 1, "\(settled)")
            #expect(try await fx.gateway.verify(attempt: lost.id).status == .succeeded && simulator.charges == 1 && simulator.paymentCount == 1)
        }
    }

    /// A replay's refusal proves nothing: the first try may have charged and
    /// the refusal be about something since changed (a rotated key, a moved
    /// base URL). The attempt stays pending until a replay is answered.
    @Test(arguments: [400, 401, 403, 404])
    func aRefusedReplayOfALostCreateLeavesItPending(status: Int) async throws {
        let faults = FaultPlan()
        try await withGateway(faults: faults) { fx, simulator in
            let s = try await session(fx)
            let jwe = try await encryptedCard(fx, s, card: "4111111111111111")
            let path = "/v2/\(WorldlineSimulator.merchantID)/payments"
            faults.add(.init(provider: "worldline", path: path, method: "POST", fault: .drop, count: 1))
            let lost = try await fx.gateway.attempt(session: s.session.id, NewAttempt(
                method: "visa", provider: "worldline", instrument: ["encryptedCustomerInput": .string(jwe)]))
            #expect(lost.status == .pending && simulator.charges == 1)
            faults.add(.init(provider: "worldline", path: path, method: "POST", fault: .status(status), count: 1))
            let refused = try await fx.gateway.verify(attempt: lost.id)
            #expect(refused.status == .pending, "a refused replay ended an attempt that was charged: \(refused)")
            let settled = try await fx.gateway.verify(attempt: lost.id)
            #expect(settled.status == .succeeded && simulator.charges == 1 && simulator.paymentCount == 1, "\(settled)")
        }
    }

    // MARK: Back office

    @Test func aPreAuthorisationIsCapturedPartlyTwiceThenRefundedAndAnotherIsCancelled() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, amount: 30_000, capture: .manual)
            let authorized = try await pay(fx, s, card: "4111111111111111")
            #expect(authorized.status == .authorized && simulator.charges == 0, "\(authorized)")
            let first = try await fx.gateway.capture(payment: authorized.id, amount: 10_000, idempotencyKey: "cap-1")
            let replay = try await fx.gateway.capture(payment: authorized.id, amount: 10_000, idempotencyKey: "cap-1")
            #expect(first.balance.captured == 10_000 && replay.balance.captured == 10_000 && simulator.charges == 1)
            let second = try await fx.gateway.capture(payment: authorized.id, amount: 5_000, idempotencyKey: "cap-2")
            #expect(second.balance.captured == 15_000 && simulator.charges == 2)
            #expect(simulator.payment(try #require(authorized.providerReference))?.captured == 15_000)
            let refund = try await fx.gateway.refund(payment: authorized.id, amount: 7_000, idempotencyKey: "ref-1")
            #expect(refund.balance.refunded == 7_000 && simulator.payment(authorized.providerReference!)?.refunded == 7_000)
            await #expect { try await fx.gateway.refund(payment: authorized.id, amount: 9_000, idempotencyKey: "ref-2") } throws: {
                ($0 as? Problem)?.code == .invalidRequest || ($0 as? Problem)?.code == .amountExceedsCaptured
            }
            #expect(simulator.payment(authorized.providerReference!)?.refunded == 7_000)

            let other = try await session(fx, amount: 12_000, capture: .manual)
            let held = try await pay(fx, other, card: "5555555555554444")
            let voided = try await fx.gateway.void(payment: held.id, idempotencyKey: "void-1")
            let heldID = try #require(held.providerReference)
            #expect(voided.balance.voided && simulator.payment(heldID)?.status == "CANCELLED", "\(voided)")
            #expect(simulator.charges == 2)
        }
    }

    /// The first capture lands but its answer is lost; the retry under the
    /// same key is answered with the first's result, or, when Worldline
    /// refuses it (here 403, 409 or 400: a rotated key, a payment now fully
    /// captured), the adapter reads the payment and finds the capture made.
    @Test(arguments: [nil, 403, 409, 400] as [Int?])
    func aDroppedCaptureRetriedUnderItsKeyCapturesOnce(retryRefused: Int?) async throws {
        let faults = FaultPlan()
        try await withGateway(faults: faults) { fx, simulator in
            let s = try await session(fx, amount: 20_000, capture: .manual)
            let authorized = try await pay(fx, s, card: "4111111111111111")
            let id = try #require(authorized.providerReference)
            let path = "/v2/\(WorldlineSimulator.merchantID)/payments/\(id)/capture"
            faults.add(.init(provider: "worldline", path: path, method: "POST", fault: .drop, count: 1))
            if let retryRefused { faults.add(.init(provider: "worldline", path: path, method: "POST", fault: .status(retryRefused), count: 1)) }
            _ = try? await fx.gateway.capture(payment: authorized.id, amount: 20_000, idempotencyKey: "cap-drop")
            #expect(simulator.charges == 1 && simulator.payment(id)?.captured == 20_000)
            let retried = try await fx.gateway.capture(payment: authorized.id, amount: 20_000, idempotencyKey: "cap-drop")
            #expect(retried.balance.captured == 20_000 && simulator.charges == 1 && simulator.payment(id)?.captured == 20_000, "\(retried)")
        }
    }

    /// Worldline takes an `X-GCS-Idempotence-Key` of at most 40 characters
    /// (and its simulator refuses a longer one, as the provider does); the
    /// engine's keys are 45 to some 300. The adapter sends a key derived
    /// from the engine's: a capture, a refund and a void under long merchant
    /// keys go through, and a retry of each under its key moves nothing twice.
    @Test func longIdempotencyKeysAreSentWithinWorldlinesFortyCharacters() async throws {
        try await withGateway { fx, simulator in
            let long = String(repeating: "k", count: 200)
            let s = try await session(fx, amount: 20_000, capture: .manual)
            let authorized = try await pay(fx, s, card: "4111111111111111")
            let id = try #require(authorized.providerReference)
            let captured = try await fx.gateway.capture(payment: authorized.id, amount: 8_000, idempotencyKey: long + "-capture")
            #expect(captured.balance.captured == 8_000 && simulator.payment(id)?.captured == 8_000, "\(captured)")
            let again = try await fx.gateway.capture(payment: authorized.id, amount: 8_000, idempotencyKey: long + "-capture")
            #expect(again.balance.captured == 8_000 && simulator.payment(id)?.captured == 8_000, "the retry captured again")
            let refunded = try await fx.gateway.refund(payment: authorized.id, amount: 3_000, idempotencyKey: long + "-refund")
            #expect(refunded.balance.refunded == 3_000, "\(refunded)")

            let other = try await pay(fx, try await session(fx, amount: 5_000, capture: .manual), card: "4111111111111111")
            let voided = try await fx.gateway.void(payment: other.id, idempotencyKey: long + "-void")
            let otherID = try #require(other.providerReference)
            #expect(voided.balance.voided && simulator.payment(otherID)?.status == "CANCELLED", "\(voided)")
        }
    }

    /// A capture answered 409 `30001002` (a request under its key still
    /// running: the code the current SDK knows, `1409` before it) is an
    /// unknown outcome, never a final refusal: the capture stays held, and
    /// its retry under the same key captures once.
    @Test func aCaptureAnsweredStillRunningIsUnknownNeverRefused() async throws {
        let faults = FaultPlan()
        try await withGateway(faults: faults) { fx, simulator in
            let s = try await session(fx, amount: 20_000, capture: .manual)
            let authorized = try await pay(fx, s, card: "4111111111111111")
            let id = try #require(authorized.providerReference)
            let path = "/v2/\(WorldlineSimulator.merchantID)/payments/\(id)/capture"
            faults.add(.init(provider: "worldline", path: path, method: "POST", fault: .status(409), count: 1))
            do {
                let first = try await fx.gateway.capture(payment: authorized.id, amount: 20_000, idempotencyKey: "cap-running")
                #expect(!first.balance.inFlight.isEmpty, "a running capture was taken as settled: \(first)")
            } catch {
                #expect((error as? Problem)?.code != .invalidState, "a running capture was refused as final: \(error)")
            }
            #expect(try await fx.gateway.payment(authorized.id).balance?.inFlight.isEmpty == false, "the capture is not held")
            let retried = try await fx.gateway.capture(payment: authorized.id, amount: 20_000, idempotencyKey: "cap-running")
            #expect(retried.balance.captured == 20_000 && simulator.payment(id)?.captured == 20_000 && simulator.charges == 1, "\(retried)")
        }
    }

    // MARK: Webhooks

    @Test func aSignedWebhookSettlesAPendingPaymentOnceAndForgedOnesChangeNothing() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await pay(fx, s, card: "4000000000001091")
            let id = try #require(started.providerReference)
            // The payer authenticates but never comes back: only the webhook tells.
            _ = try await fx.payerStep(try #require(started.action?.url), outcome: "approve")
            let real = try #require(simulator.webhook(forPayment: id))
            let body = Data(real.body.utf8)

            let wrongSecret = try #require(simulator.webhook(forPayment: id, secret: "not-the-secret"))
            let unknownKey = try #require(simulator.webhook(forPayment: id, keyID: "some-other-key"))
            var altered = real.body
            altered = altered.replacingOccurrences(of: "\"id\"", with: "\"id\" ")
            var twice = real.headers
            for (name, value) in real.headers where name.lowercased() == "x-gcs-signature" { twice[name] = value + ", " + value }
            for (headers, forged) in [(wrongSecret.headers, Data(wrongSecret.body.utf8)), (unknownKey.headers, Data(unknownKey.body.utf8)),
                                      (real.headers, Data(altered.utf8)), (twice, body), ([:], body)] {
                await #expect { try await fx.gateway.webhook(provider: "worldline", headers: headers, body: forged) } throws: {
                    ($0 as? Problem)?.code == .webhookUnverified
                }
            }
            #expect(try await fx.gateway.payment(started.id).status == .pending)

            let applied = try await fx.gateway.webhook(provider: "worldline", headers: real.headers, body: body)
            guard case .applied = applied else { Issue.record("the signed webhook was not applied: \(applied)"); return }
            #expect(try await fx.gateway.payment(started.id).status == .succeeded && simulator.charges == 1)
            #expect(try await fx.gateway.webhook(provider: "worldline", headers: real.headers, body: body) == .duplicate)
        }
    }

    // MARK: A real browser

    @Test(.enabled(if: HeadlessBrowser.isAvailable, "chromium and chromedriver installed (scripts/install-prerequisites), GATEWAY_BROWSER_TESTS not 0"))
    func theThreeDSecurePageIsCompletedInHeadlessChromium() async throws {
        try await withGateway { fx, simulator in
            let back = fx.root + "/shop/return"
            let s = try await session(fx, back: back)
            let started = try await pay(fx, s, card: "4000000000001091")
            let page = try #require(started.action?.url)
            try await HeadlessBrowser.with { browser in
                try await browser.open(page)
                #expect(try await browser.source().contains("1091"), "the page does not show the card's last four digits")
                try await browser.click("#authenticate")
                let landed = try await browser.url(startingWith: back + "?")
                #expect(landed.hasPrefix(back + "?"), "\(landed)")
                let paid = try await fx.gateway.proceed(session: s.session.id, attempt: started.id,
                                                        PayerInput(returnParams: SandboxGateway.queryParameters(landed)))
                #expect(paid.status == .succeeded && simulator.charges == 1, "\(paid)")
            }
        }
    }
}
