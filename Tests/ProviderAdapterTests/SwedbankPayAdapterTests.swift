import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import Testing
import TestSupport

/// The Swedbank Pay adapter through the real host (dlopen, bridge, engine)
/// against the simulator: Swish on this device and by phone number, saved
/// cards with and without 3-D Secure, a new card on the hosted view, the
/// wallets, the web menu in its three modes, every mapped problem, lost
/// answers reconciled without charging twice, the back office, and callbacks
/// that are believed only once the order says so.
@Suite("Swedbank Pay adapter through the host", .heavy)
struct SwedbankPayAdapterTests {
    static let back = "https://shop.example/return"
    static let payer = Payer(name: "Sara Lind", email: "sara@example.se", phone: "+46701234567", reference: "cust-42")

    /// The sandbox gateway, Swedbank Pay's requests given 30 s (not the
    /// sandbox's 3): a machine running many gateways at once must not turn
    /// an instruments probe or an attempt into a lost answer.
    func withGateway(_ body: (SandboxGateway, SwedbankPaySimulator) async throws -> Void) async throws {
        let fx = try await SandboxGateway.start(configure: { $0.reconcileInterval = .seconds(3600) }) { manifests in
            try ManifestText.edit(manifests.appendingPathComponent("swedbankpay.json"),
                                  [(#""request_timeout_ms": 3000"#, #""request_timeout_ms": 30000"#)])
        }
        do { try await body(fx, try fx.simulator("swedbankpay")) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    func session(_ fx: SandboxGateway, amount: Int64 = 25_000, currency: String = "SEK", orderId: String? = nil, payer: Payer? = SwedbankPayAdapterTests.payer,
                 capture: CaptureMode = .automatic) async throws -> SessionSnapshot {
        try await fx.gateway.createSession(NewSession(
            amount: Money(value: amount, currency: currency), country: "SE", orderId: orderId ?? "o-\(UUID().uuidString.prefix(8))", payer: payer,
            capture: capture, returnUrl: Self.back))
    }

    func attempt(_ fx: SandboxGateway, _ session: SessionSnapshot, _ method: String, _ instrument: [String: JSONValue]? = nil,
                 instrumentId: String? = nil) async throws -> Attempt {
        try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: method, provider: instrumentId == nil ? "swedbankpay" : nil,
                                                                             instrument: instrument, instrumentId: instrumentId))
    }

    /// The order's uuid, from the attempt's provider reference (empty when it has none).
    static func order(_ attempt: Attempt) -> String {
        attempt.providerReference?.split(separator: "/").last.map(String.init) ?? ""
    }

    func continueWith(_ fx: SandboxGateway, _ session: SessionSnapshot, _ attempt: Attempt, location: String?) async throws -> Attempt {
        let params = SandboxGateway.queryParameters(try #require(location))
        return try await fx.gateway.proceed(session: session.session.id, attempt: attempt.id, PayerInput(returnParams: params))
    }

    /// Swedbank Pay's lengths, at and past each: `description` string(40),
    /// `orderReference` string(50), `payeeReference` string(30) letters and
    /// digits (its Checkout v3 reference). The order id fills the first two,
    /// cut to fit; the attempt id the third. The simulator refuses past each.
    @Test(arguments: [33, 34, 50, 51, 300])
    func labelsAreCutToSwedbankPaysLengths(orderLength: Int) async throws {
        try await withGateway { fx, simulator in
            let orderId = String((0..<orderLength).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
            let started = try await session(fx, orderId: orderId)
            let attempt = try await attempt(fx, started, "visa")
            #expect(attempt.status == .pending, "\(String(describing: attempt.problem))")
            let labels = try #require(simulator.labels(ofOrder: Self.order(attempt)))
            #expect(labels.orderReference == String(orderId.prefix(50)))
            #expect(labels.description == String("Order \(orderId)".prefix(40)))
            #expect(labels.payeeReference.count <= 30 && labels.payeeReference.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        }
    }

    // MARK: Swish

    @Test func swishOnThisDeviceSwitchesToTheAppAndSucceedsOnlyOnceTheOrderIsPaid() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await attempt(fx, s, "swish", ["device": .string("this")])
            #expect(started.status == .pending && started.action?.type == .appSwitch)
            let url = try #require(started.action?.url)
            #expect(url.contains("/ecom/swish/") && url.contains("callbackurl="))
            // A return before paying, with made-up parameters, changes nothing.
            let early = try await fx.gateway.proceed(session: s.session.id, attempt: started.id, PayerInput(returnParams: ["sbp_return": "complete"]))
            #expect(early.status == .pending && simulator.charges == 0)
            let step = try await fx.payerStep(url, outcome: "approve")
            #expect(step.status == 302 && step.location?.hasPrefix(Self.back + "?sbp_return=app") == true, "\(step)")
            let paid = try await continueWith(fx, s, started, location: step.location)
            #expect(paid.status == .succeeded && paid.providerStatus == "Paid")
            #expect(simulator.charges == 1 && simulator.status(ofOrder: Self.order(paid)) == "Paid")
        }
    }

    @Test(arguments: [("070-123 45 67", "+46701234567"), ("0046701234567", "+46701234567"), ("+46 (0)70 123 45 67", "+46701234567"),
                      ("46701234567", "+46701234567")])
    func swishOnAnotherDeviceSendsTheNormalisedNumber(typed: String, sent: String) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string(typed)])
            #expect(started.status == .pending && started.action == nil)
            let order = Self.order(started)
            #expect(simulator.msisdn(ofOrder: order) == sent)
            // The payer approves on the other phone; verify finds it paid.
            let step = try await fx.payerStep(fx.root + "/swedbankpay/ecom/swish/" + (try #require(simulator.token(ofOrder: order))), outcome: "approve")
            #expect(step.status == 302)
            let paid = try await fx.gateway.verify(attempt: started.id)
            #expect(paid.status == .succeeded && simulator.charges == 1)
        }
    }

    /// The host checks Swish's form before Swedbank Pay is called (the
    /// shipped manifest's `msisdn` field, docs/fields.md): a number Swish
    /// cannot take is a 422 naming the field, in both languages, and no
    /// payment order is made.
    @Test(arguments: ["12345", "+4670123", "+46 8 123 456 78", "070-123 45 6x"])
    func aNumberSwishCannotTakeIsAFieldProblemAndNothingIsSent(typed: String) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, payer: nil)
            await #expect { _ = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string(typed)]) } throws: { error in
                guard let problem = error as? Problem, problem.code == .invalidFields, problem.status == 422,
                      let field = problem.problems?.first, problem.problems?.count == 1 else { return false }
                return field.field == "instrument.msisdn" && field.code == "msisdn" && !field.payerMessage.en.isEmpty && !field.payerMessage.ar.isEmpty
                    && field.payerMessage.en != field.payerMessage.ar && !problem.detail.contains(typed)
            }
            #expect(simulator.orderCount == 0, "an order was created for a number Swish cannot take")
            #expect(try await fx.gateway.session(s.session.id).session.attempts.isEmpty)
        }
    }

    /// The merchant aborts while the payer is asked on the other phone: the
    /// payment order is aborted at Swedbank Pay (the provider's `abort`)
    /// first, so the phone can no longer pay it, and then the session.
    @Test func abortingTheSessionAbortsThePendingPaymentOrder() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, payer: nil)
            let started = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string("+46701234567")])
            #expect(started.status == .pending)
            let order = Self.order(started)
            let aborted = try await fx.gateway.abort(session: s.session.id, idempotencyKey: "abort-sbp")
            #expect(aborted.session.status == .cancelled && aborted.session.attempts.first?.status == .cancelled, "\(aborted.session)")
            #expect(simulator.status(ofOrder: order) == "Aborted")
            _ = try await fx.payerStep(fx.root + "/swedbankpay/ecom/swish/" + (try #require(simulator.token(ofOrder: order))), outcome: "approve")
            #expect(simulator.charges == 0 && simulator.status(ofOrder: order) == "Aborted")
        }
    }

    /// An `href` on another origin than `base_url` would carry the access
    /// token there: the adapter never follows it. The simulator's answers
    /// point at `localhost` (the same server, another origin), and no
    /// request ever arrives for that host; the order made is left pending.
    @Test func anHrefOnAnotherOriginIsNeverFollowed() async throws {
        try await withGateway { fx, simulator in
            let port = try #require(URL(string: fx.root)?.port)
            simulator.apiHrefBase = "http://localhost:\(port)/swedbankpay"
            let s = try await session(fx, payer: nil)
            let started = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string("+46701234567")])
            #expect(started.status == .pending && started.providerReference != nil, "\(started)")
            _ = try? await fx.gateway.verify(attempt: started.id)
            let hosts = simulator.apiHosts
            #expect(!hosts.isEmpty && hosts.allSatisfy { $0.hasPrefix("127.0.0.1") }, "\(hosts)")
            #expect(simulator.charges == 0 && simulator.msisdn(ofOrder: Self.order(started)) == nil)
        }
    }

    // MARK: Instruments and saved cards

    @Test func theInstrumentsOfAKnownPayerListSavedCardsWithoutNumbers() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let visa = s.instruments["visa"]?.filter { $0.provider == "swedbankpay" } ?? []
            #expect(visa.map(\.instrument.last4) == ["0004", "0416"], "\(s.instruments)")
            #expect(s.instruments["mastercard"]?.first { $0.provider == "swedbankpay" }?.instrument.last4 == "3406")
            #expect(s.instruments["swish"]?.first { $0.provider == "swedbankpay" }?.instrument.masked == "+46 7* *** **01")
            #expect(s.instruments["applepay"]?.contains { $0.provider == "swedbankpay" && $0.instrument.available == true } == true)
            let web = s.instruments["swedbankpay"]?.map { $0.instrument.label ?? "" } ?? []
            #expect(web == ["All payment options", "Invoice-PayExFinancingSe"], "\(web)")
            let text = String(decoding: DocumentCoding.encode(s), as: UTF8.self)
            #expect(!text.contains("4925000000000004") && !text.contains("492500******0004"))
            // The probe order was aborted: nothing is left payable.
            #expect(simulator.orderCount == 1)
            // An anonymous session asks nothing of Swedbank Pay.
            _ = try await session(fx, payer: nil)
            #expect(simulator.orderCount == 1)
        }
    }

    func savedCard(_ s: SessionSnapshot, brand: String = "visa", last4: String) throws -> String {
        try #require(s.instruments[brand]?.first { $0.provider == "swedbankpay" && $0.instrument.last4 == last4 }?.id)
    }

    @Test func aSavedCardPaysFrictionlesslyAndIsCapturedAtOnce() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let paid = try await attempt(fx, s, "visa", instrumentId: try savedCard(s, last4: "0004"))
            #expect(paid.status == .succeeded && paid.providerID == "swedbankpay", "\(paid)")
            #expect(simulator.charges == 1)
            // A verify later finds the capture made, and makes none.
            let again = try await fx.gateway.verify(attempt: paid.id)
            #expect(again.status == .succeeded && simulator.charges == 1)
        }
    }

    @Test(arguments: ["approve", "decline"])
    func aChallengedSavedCardGoesThroughThreeDS(outcome: String) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let started = try await attempt(fx, s, "visa", instrumentId: try savedCard(s, last4: "0416"))
            #expect(started.status == .pending && started.action?.type == .threeDS && started.action?.method == "POST")
            let action = try #require(started.action)
            let creq = try #require(action.formFields?["creq"])
            // The browser posts the form to the ACS, then the payer answers.
            let page = try await fx.post(try #require(action.url), form: ["creq": creq])
            #expect(page.status == 200 && page.body.contains("acs-approve"))
            let step = try await fx.post(try #require(action.url), form: ["outcome": outcome])
            #expect(step.status == 302 && step.location?.contains("sbp_return=3ds") == true && step.location?.contains("cres=") == true)
            let done = try await continueWith(fx, s, started, location: step.location)
            if outcome == "approve" {
                #expect(done.status == .succeeded && simulator.charges == 1)
            } else {
                #expect(done.status == .failed && done.problem?.code == .authenticationFailed && simulator.charges == 0)
                #expect(simulator.status(ofOrder: Self.order(done)) == "Aborted")
            }
        }
    }

    @Test(arguments: [("ask", true, false), ("true", false, true)])
    func aNewCardInTheHostedViewPassesTheConsentToStoreIt(store: String, consent: Bool, generate: Bool) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let value: JSONValue = store == "ask" ? .string("ask") : .bool(true)
            let started = try await attempt(fx, s, "visa", ["storeCard": value])
            #expect(started.status == .pending && started.action?.type == .redirect)
            let order = Self.order(started)
            let menu = try #require(simulator.menu(ofOrder: order))
            #expect(menu.methods == ["CreditCard"] && menu.consent == consent && menu.generateToken == generate)
            let url = try #require(started.action?.url)
            let form = try await fx.get(url + "/card")
            #expect(form.body.contains("id=\"card-number\"") && form.body.contains("id=\"consent\"") == consent)
            var fields = ["number": "4925 0000 0000 0004", "expiry": "12/30", "cvc": "123"]
            if consent { fields["consent"] = "yes" }
            let step = try await fx.post(url + "/card", form: fields)
            #expect(step.status == 302 && step.location?.hasPrefix(Self.back + "?sbp_return=complete") == true, "\(step)")
            let paid = try await continueWith(fx, s, started, location: step.location)
            #expect(paid.status == .succeeded && simulator.charges == 1)
            #expect(!simulator.storedCardText.contains("4925000000000004"))
            // The kept card is offered to the payer next time.
            let next = try await session(fx)
            #expect(next.instruments["visa"]?.filter { $0.provider == "swedbankpay" }.count == 3)
        }
    }

    @Test(arguments: ["applepay", "googlepay"])
    func walletTokensGoAsTheAttemptsPayload(method: String) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let paid = try await attempt(fx, s, method, ["paymentData": .object(["version": .string("EC_v1"), "data": .string("c2FuZGJveA==")])])
            #expect(paid.status == .succeeded && simulator.charges == 1)
            let missing = try await attempt(fx, try await session(fx, payer: nil), method, [:])
            #expect(missing.status == .failed && missing.problem?.code == .invalidRequest && simulator.charges == 1,
                    "a wallet payment without its token was sent")
        }
    }

    @Test(arguments: [(["menu": JSONValue.string("all")], nil as [String]?),
                      (["menu": .string("restricted"), "instruments": .array([.string("Swish"), .string("CreditCard")])], ["Swish", "CreditCard"]),
                      (["menu": .string("instrument"), "instrument": .string("Invoice-PayExFinancingSe")], ["Invoice-PayExFinancingSe"])])
    func theWebMenuOpensInEachMode(instrument: [String: JSONValue], shown: [String]?) async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, payer: nil)
            let started = try await attempt(fx, s, "swedbankpay", instrument)
            #expect(started.status == .pending && started.action?.type == .redirect)
            #expect(simulator.menu(ofOrder: Self.order(started))?.methods == shown)
            let page = try await fx.get(try #require(started.action?.url))
            for method in ["CreditCard", "Swish", "ApplePay", "GooglePay", "Invoice-PayExFinancingSe"] {
                #expect(page.body.contains("id=\"method-\(method)\"") == (shown?.contains(method) ?? true), "\(method)")
            }
        }
    }

    // MARK: A real browser

    /// A payer in headless Chromium: the payment menu, the card, the hosted
    /// card view, the issuer's 3-D Secure page, back to the shop; the shop's
    /// continue then finds the order paid.
    @Test(.enabled(if: HeadlessBrowser.isAvailable, "chromium and chromedriver installed (scripts/install-prerequisites), GATEWAY_BROWSER_TESTS not 0"))
    func theHostedMenuIsPaidByCardInHeadlessChromium() async throws {
        try await withGateway { fx, simulator in
            let back = fx.root + "/shop/return"
            let s = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 25_000, currency: "SEK"), country: "SE", orderId: "o-browser", returnUrl: back))
            let started = try await fx.gateway.attempt(session: s.session.id, NewAttempt(
                method: "swedbankpay", provider: "swedbankpay", instrument: ["menu": .string("all")]))
            let menu = try #require(started.action?.url)
            try await HeadlessBrowser.with { browser in
                try await browser.open(menu)
                try await browser.click("#method-CreditCard")
                try await browser.type("#card-number", "4761 7390 0101 0416")
                try await browser.type("#expiry", "12/30")
                try await browser.type("#cvc", "123")
                try await browser.click("#pay")
                #expect(try await browser.source(containing: "Card ending 0416").contains("Card ending 0416"), "not on the issuer's page")
                try await browser.click("#acs-approve")
                let landed = try await browser.url(startingWith: back + "?")
                #expect(landed.hasPrefix(back + "?sbp_return=complete"), "\(landed)")
                let paid = try await fx.gateway.proceed(session: s.session.id, attempt: started.id,
                                                        PayerInput(returnParams: SandboxGateway.queryParameters(landed)))
                #expect(paid.status == .succeeded && simulator.charges == 1, "\(paid)")
            }
        }
    }

    // MARK: Problems

    /// Each trigger, the host's problem, and the attempt's status.
    static let problems: [(String, String, AttemptStatus)] = [
        ("swish-decline", "wallet_declined", .failed), ("swish-noapp", "app_launch_failed", .failed), ("swish-cancel", "user_cancelled", .cancelled),
        ("swish-RF07", "wallet_declined", .failed), ("swish-TM01", "expired", .failed), ("swish-BANKIDCL", "user_cancelled", .cancelled),
        ("card-inactive", "method_unavailable", .failed), ("card-900361", "insufficient_funds", .failed), ("card-900334", "fraud_detected", .failed),
        ("card-952400", "card_declined", .failed),
    ]

    @Test(arguments: SwedbankPayAdapterTests.problems)
    func everyMappedProblemReachesThePayerInEnglishAndArabic(trigger: String, code: String, status: AttemptStatus) async throws {
        try await withGateway { fx, simulator in
            let parts = trigger.split(separator: "-").map(String.init)
            let done: Attempt
            if parts[0] == "swish" {
                let outcome = ["decline", "noapp", "cancel"].contains(parts[1]) ? parts[1] : "approve"
                let s = try await session(fx, orderId: outcome == "approve" ? parts[1] : nil)
                let started = try await attempt(fx, s, "swish")
                let step = try await fx.payerStep(try #require(started.action?.url), outcome: outcome)
                done = try await continueWith(fx, s, started, location: step.location)
            } else {
                let amount = Int64(parts[1]) ?? 25_000
                let s = try await session(fx, amount: amount)
                done = try await attempt(fx, s, parts[1] == "inactive" ? "mastercard" : "visa",
                                         instrumentId: try savedCard(s, brand: parts[1] == "inactive" ? "mastercard" : "visa",
                                                                     last4: parts[1] == "inactive" ? "3406" : "0004"))
            }
            #expect(done.status == status, "\(trigger): \(done)")
            let problem = try #require(done.problem)
            #expect(problem.code.rawValue == code, "\(trigger): \(problem)")
            #expect(!problem.payerMessage.en.isEmpty && !problem.payerMessage.ar.isEmpty && problem.payerMessage.en != problem.payerMessage.ar)
            #expect(simulator.status(ofOrder: Self.order(done)) == "Aborted" && simulator.charges == 0)
        }
    }

    @Test func aNewAttemptAfterAProblemPaysInTheSameSession() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx)
            let declined = try await attempt(fx, s, "mastercard", instrumentId: try savedCard(s, brand: "mastercard", last4: "3406"))
            #expect(declined.status == .failed)
            let paid = try await attempt(fx, s, "visa", instrumentId: try savedCard(s, last4: "0004"))
            #expect(paid.status == .succeeded && simulator.charges == 1)
            let (paidOrder, declinedOrder) = (Self.order(paid), Self.order(declined))
            #expect(paidOrder != declinedOrder, "a failed attempt's order was reused")
        }
    }

    // MARK: Lost answers

    @Test(arguments: ["drop", "timeout"])
    func aLostSwishStartStaysPendingAndVerifyFindsOneCharge(fault: String) async throws {
        let faults = FaultPlan()
        faults.add(.init(provider: "swedbankpay", path: "/psp/paymentsessions/", method: "POST",
                         fault: fault == "drop" ? .drop : .latency(milliseconds: SandboxGateway.pastRequestTimeout), count: 1))
        let fx = try await SandboxGateway.start(faults: faults) { $0.reconcileInterval = .seconds(3600) }
        do {
            let simulator: SwedbankPaySimulator = try fx.simulator("swedbankpay")
            let s = try await session(fx, payer: nil)
            let started = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string("+46701234567")])
            #expect(started.status == .pending && started.problem?.code == .networkError, "\(started)")
            let order = Self.order(started)
            // The start landed: the payer approves on the phone.
            _ = try await fx.payerStep(fx.root + "/swedbankpay/ecom/swish/" + (try #require(simulator.token(ofOrder: order))), outcome: "approve")
            let paid = try await fx.gateway.verify(attempt: started.id)
            #expect(paid.status == .succeeded && simulator.charges == 1)
            #expect(try await fx.gateway.verify(attempt: started.id).status == .succeeded && simulator.charges == 1)
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }

    /// The host's deadline ends an authorize after the order exists: the
    /// attempt has no reference, verify never calls it "not charged", and the
    /// order's callback, which names the payment, settles it with its reference.
    @Test func anAuthorizeCutByTheHostsDeadlineIsSettledByTheOrdersCallback() async throws {
        // The host's call deadline, a backstop for the test's other calls; the
        // faulted request outlasts it whatever the machine's speed.
        let deadline = TestTime.milliseconds(8_000)
        let faults = FaultPlan()
        faults.add(.init(provider: "swedbankpay", path: "/psp/paymentsessions/", method: "POST", fault: .latency(milliseconds: deadline + 2_000), count: 1))
        let fx = try await SandboxGateway.start(faults: faults, configure: { $0.reconcileInterval = .seconds(3600) }) { manifests in
            try ManifestText.edit(manifests.appendingPathComponent("swedbankpay.json"), [
                (#""timeout_ms": 60000"#, #""timeout_ms": \#(deadline)"#), (#""request_timeout_ms": 3000"#, #""request_timeout_ms": 30000"#)])
        }
        do {
            let simulator: SwedbankPaySimulator = try fx.simulator("swedbankpay")
            let s = try await session(fx, payer: nil)
            let cut = try await attempt(fx, s, "swish", ["device": .string("other"), "msisdn": .string("+46701234567")])
            #expect(cut.status == .pending && cut.providerReference == nil, "\(cut)")
            let verified = try await fx.gateway.verify(attempt: cut.id)
            #expect(verified.status == .pending, "a verify without a reference called it settled: \(verified)")
            // The Swish request did start (the latency delayed only its answer); the payer approves.
            let order = try #require(simulator.lastOrderID)
            #expect(try await waitUntil(within: .seconds(30)) { simulator.msisdn(ofOrder: order) != nil })
            let phone = try await fx.payerStep(fx.root + "/swedbankpay/ecom/phone/" + order, outcome: "approve")
            #expect(phone.status == 302)
            _ = try await fx.get(try #require(phone.location))
            let callback = Data(try #require(simulator.callback(forOrder: order)).utf8)
            // Swedbank retries a callback that was not acknowledged; so may this test.
            var delivered = false
            for _ in 0..<10 where !delivered {
                delivered = (try? await fx.gateway.webhook(provider: "swedbankpay", headers: [:], body: callback)) != nil
            }
            #expect(delivered)
            let settled = try await fx.gateway.payment(cut.id)
            #expect(settled.status == .succeeded && settled.providerReference?.hasSuffix(order) == true && simulator.charges == 1, "\(settled)")
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }

    @Test func aLostOrderCreationChargesNothingAndMayGoElsewhere() async throws {
        let faults = FaultPlan()
        faults.add(.init(provider: "swedbankpay", path: "/psp/paymentorders", method: "POST", fault: .status(503), count: 1))
        let fx = try await SandboxGateway.start(faults: faults) { $0.reconcileInterval = .seconds(3600) }
        do {
            let s = try await session(fx, payer: nil)
            let failed = try await attempt(fx, s, "swish")
            #expect(failed.status == .failed && failed.problem?.code == .providerError && failed.problem?.retryable == true)
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }

    // MARK: Back office

    @Test func aCardIsAuthorizedThenPartlyCapturedTwiceThenPartlyRefundedAndAnotherIsVoided() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, amount: 30_000, capture: .manual)
            let authorized = try await attempt(fx, s, "visa", instrumentId: try savedCard(s, last4: "0004"))
            #expect(authorized.status == .authorized && simulator.charges == 0)
            let first = try await fx.gateway.capture(payment: authorized.id, amount: 10_000, idempotencyKey: "cap-1")
            let replay = try await fx.gateway.capture(payment: authorized.id, amount: 10_000, idempotencyKey: "cap-1")
            #expect(first.balance.captured == 10_000 && replay.balance.captured == 10_000 && simulator.charges == 1)
            let second = try await fx.gateway.capture(payment: authorized.id, amount: 5_000, idempotencyKey: "cap-2")
            #expect(second.balance.captured == 15_000 && simulator.charges == 2)
            let refund = try await fx.gateway.refund(payment: authorized.id, amount: 7_000, idempotencyKey: "ref-1")
            #expect(refund.balance.refunded == 7_000)
            await #expect { try await fx.gateway.refund(payment: authorized.id, amount: 9_000, idempotencyKey: "ref-2") } throws: {
                ($0 as? Problem)?.code == .invalidRequest || ($0 as? Problem)?.code == .amountExceedsCaptured
            }

            let other = try await session(fx, amount: 12_000, capture: .manual)
            let held = try await attempt(fx, other, "visa", instrumentId: try savedCard(other, last4: "0004"))
            let voided = try await fx.gateway.void(payment: held.id, idempotencyKey: "void-1")
            #expect(voided.balance.voided && simulator.status(ofOrder: Self.order(held)) == "Cancelled")
            #expect(try await fx.gateway.verify(attempt: held.id).status == .authorized)
        }
    }

    @Test func swishCannotBeHeldForManualCapture() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, payer: nil, capture: .manual)
            let refused = try await attempt(fx, s, "swish")
            #expect(refused.status == .failed && refused.problem?.code == .invalidRequest && refused.problem?.detail.contains("manual capture") == true)
            #expect(simulator.orderCount == 0)
        }
    }

    // MARK: Callbacks

    @Test func aCallbackWhoseBodyLiesChangesNothingUntilTheOrderSaysSo() async throws {
        try await withGateway { fx, simulator in
            let s = try await session(fx, payer: nil)
            let started = try await attempt(fx, s, "swish")
            let order = Self.order(started)
            // The body claims a paid Swish sale; the order is still Initialized.
            var lie = try #require(simulator.callback(forOrder: order))
            lie = lie.replacingOccurrences(of: "\"instrument\":\"\"", with: "\"instrument\":\"Swish\",\"status\":\"Paid\"")
            _ = try await fx.gateway.webhook(provider: "swedbankpay", headers: ["content-type": "application/json"], body: Data(lie.utf8))
            #expect(try await fx.gateway.payment(started.id).status == .pending && simulator.charges == 0)
            // Paid for real: the next callback is applied, once.
            _ = try await fx.payerStep(try #require(started.action?.url), outcome: "approve")
            let real = Data(try #require(simulator.callback(forOrder: order)).utf8)
            let applied = try await fx.gateway.webhook(provider: "swedbankpay", headers: [:], body: real)
            #expect(applied == .applied(AttemptRef(sessionID: s.session.id, attemptID: started.id)))
            #expect(try await fx.gateway.payment(started.id).status == .succeeded)
            #expect(try await fx.gateway.webhook(provider: "swedbankpay", headers: [:], body: real) == .duplicate)
            // An order the provider does not know is refused.
            let unknown = Data(#"{"orderReference":"x","paymentOrder":{"id":"/psp/paymentorders/00000000-0000-0000-0000-000000000000","number":1}}"#.utf8)
            await #expect { try await fx.gateway.webhook(provider: "swedbankpay", headers: [:], body: unknown) } throws: {
                ($0 as? Problem)?.code == .webhookUnverified
            }
        }
    }
}
