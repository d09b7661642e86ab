import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import ProviderSandbox
import TestSupport
import Testing

/// The HyperPay adapter through the real host (dlopen, bridge, engine)
/// against the simulator: the widget flow, every failure class it maps,
/// lost answers reconciled without charging twice, and webhooks.
@Suite("HyperPay adapter through the host", .heavy)
struct HyperPayAdapterTests {
    static let back = "https://shop.example/return"

    func withGateway(_ body: (SandboxGateway, HyperPaySimulator) async throws -> Void) async throws {
        try await SandboxGateway.run(simulator: "hyperpay", body)
    }

    /// A session and a HyperPay attempt, pending at the widget.
    func start(_ fx: SandboxGateway, method: String = "visa", amount: Money = Money(value: 9200, currency: "SAR"),
               country: String = "SA", capture: CaptureMode = .automatic) async throws -> StartedAttempt {
        try await fx.start(NewSession(amount: amount, country: country, orderId: "order-\(UUID().uuidString.prefix(8))", capture: capture, returnUrl: Self.back),
                           NewAttempt(method: method, provider: "hyperpay"))
    }

    /// The payer's step on the widget, then the return to the shop.
    func pay(_ fx: SandboxGateway, _ started: StartedAttempt, outcome: String = "approve",
             code: String? = nil) async throws -> Attempt {
        try await fx.payOnHostedPage(started, outcome: outcome, query: code.map { "&sandbox_code=\($0)" } ?? "", returnPrefix: Self.back + "?id=")
    }

    @Test func aVisaPaymentRedirectsToTheWidgetAndSucceedsOnlyOnceTheStatusQuerySaysSo() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            #expect(started.attempt.action?.type == .redirect)
            let url = try #require(started.attempt.action?.url)
            #expect(url.contains("/hyperpay/v1/paymentWidgets/") && url.contains("brands=VISA"))
            // A return before paying, with made-up parameters, changes nothing.
            let early = try await fx.gateway.proceed(session: started.session, attempt: started.attempt.id,
                                                     PayerInput(returnParams: ["id": "forged", "resourcePath": "/v1/checkouts/forged/payment"]))
            #expect(early.status == .pending)
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(paid.providerStatus == "000.100.110")
            #expect(simulator.charges == 1)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 2000, idempotencyKey: "refund-1")
            #expect(refund.amount == Money(value: 2000, currency: "SAR"))
            #expect(refund.balance.refunded == 2000)
        }
    }

    @Test(arguments: [("mastercard", "MASTER"), ("applepay", "APPLEPAY")])
    func eachMethodOpensTheWidgetForItsBrandAndPays(method: String, brand: String) async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, method: method)
            #expect(started.attempt.action?.url?.hasSuffix("brands=\(brand)") == true)
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func madaIsPreparedOnTheMadaEntity() async throws {
        try await withGateway { fx, simulator in
            // The simulator fails a mada payment on any other entity with 600.200.500.
            let started = try await start(fx, method: "mada")
            #expect(started.attempt.action?.url?.contains("brands=MADA") == true)
            let paid = try await pay(fx, started)
            #expect(paid.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    /// OPPWA takes two decimals whatever the currency: 1.230 KWD goes as
    /// `1.23` and is paid in full; a partial capture and refund too.
    @Test func aKuwaitiDinarAmountIsSentWithOPPWAsTwoDecimals() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, amount: Money(value: 1230, currency: "KWD"), country: "KW", capture: .manual)
            let page = try await fx.get(try #require(started.attempt.action?.url))
            #expect(page.body.contains("1.230 KWD"))
            let paid = try await pay(fx, started)
            #expect(paid.status == .authorized)
            let capture = try await fx.gateway.capture(payment: paid.id, amount: 1000, idempotencyKey: "kwd-cap")
            #expect(capture.balance.captured == 1000)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 250, idempotencyKey: "kwd-ref")
            #expect(refund.balance.refunded == 250)
            #expect(simulator.charges == 1)
        }
    }

    /// OPPWA's lengths, at and past each: `merchantInvoiceId` (the order id)
    /// 8 to 255 characters, `customer.email` 6 to 128. A label outside them
    /// is not sent (or cut to 255), and the checkout is made all the same.
    @Test(arguments: [(7, 5, nil, nil), (8, 6, 8, 6), (255, 128, 255, 128), (256, 129, 255, nil)] as [(Int, Int, Int?, Int?)])
    func labelsAreSentOnlyWithinOPPWAsLengths(order: Int, email: Int, sentOrder: Int?, sentEmail: Int?) async throws {
        try await withGateway { fx, simulator in
            let orderId = String(repeating: "o", count: order)
            let address = "a@" + String(repeating: "b", count: email - 4) + ".c"
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 9200, currency: "SAR"), country: "SA", orderId: orderId, payer: Payer(email: address), returnUrl: Self.back))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "hyperpay"))
            #expect(attempt.status == .pending, "\(String(describing: attempt.problem))")
            let checkout = String(try #require(attempt.providerReference).drop { $0 != ":" }.dropFirst())
            let labels = try #require(simulator.labels(ofCheckout: checkout))
            #expect(labels.invoiceId?.count == sentOrder)
            #expect(labels.email?.count == sentEmail)
        }
    }

    /// An amount two decimals cannot carry (1.234 KWD) is refused before
    /// anything is sent, never rounded into another charge; at the back
    /// office too.
    @Test func aKuwaitiDinarAmountTwoDecimalsCannotCarryIsRefusedBeforeSending() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 1234, currency: "KWD"), country: "KW", orderId: "order-fils", returnUrl: Self.back))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "visa", provider: "hyperpay"))
            #expect(attempt.status == .failed)
            #expect(attempt.problem?.code == .invalidRequest)
            #expect(attempt.problem?.detail.contains("1.234 KWD cannot be sent exactly") == true, "\(String(describing: attempt.problem))")
            #expect(simulator.checkouts == 0)

            let paid = try await pay(fx, try await start(fx, amount: Money(value: 1230, currency: "KWD"), country: "KW", capture: .manual))
            do {
                _ = try await fx.gateway.capture(payment: paid.id, amount: 1005, idempotencyKey: "kwd-fils")
                Issue.record("a capture of 1.005 KWD was sent")
            } catch let problem as Problem {
                #expect(problem.code == .invalidAmount, "\(problem)")
                #expect(problem.detail.contains("1.005 KWD cannot be sent exactly"), "\(problem)")
            }
            #expect(simulator.charges == 0)
            let captured = try await fx.gateway.capture(payment: paid.id, amount: 1000, idempotencyKey: "kwd-whole")
            #expect(captured.balance.captured == 1000)
        }
    }

    @Test func aPreAuthorizationIsAuthorizedThenCapturedAndRefunded() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            #expect(paid.status == .authorized)
            #expect(simulator.charges == 0)
            let capture = try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-1")
            #expect(capture.balance.captured == 5000)
            #expect(simulator.charges == 1)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: "ref-1")
            #expect(refund.balance.refunded == 5000)
            // Refunded against the capture, as OPPWA requires, not the pre-authorisation.
            #expect(simulator.refunds(of: try #require(capture.providerReference)) == (1, 5000))
        }
    }

    /// After a pre-authorisation and two partial captures, a refund goes to
    /// the captures, oldest first, one RF per capture it draws on (OPPWA
    /// refuses an RF on the PA); a later refund skips what earlier ones used;
    /// a retry moves nothing again. Called through the loaded adapter with
    /// the captures the host lists in the request.
    @Test func aRefundAfterPartialCapturesIsSentAgainstTheCapturesOldestFirst() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            #expect(paid.status == .authorized)
            let first = try await fx.gateway.capture(payment: paid.id, amount: 5000, idempotencyKey: "cap-1")
            let second = try await fx.gateway.capture(payment: paid.id, amount: 3000, idempotencyKey: "cap-2")
            #expect(second.balance.captured == 8000)
            let cp1 = try #require(first.providerReference), cp2 = try #require(second.providerReference)
            let reference = try #require(paid.providerReference)
            let preAuthorisation = try #require(simulator.paymentId(ofCheckout: String(reference.drop { $0 != ":" }.dropFirst())))
            #expect(Set([cp1, cp2, preAuthorisation]).count == 3)
            let adapter = try #require(fx.gateway.providerRecords.first { $0.id == "hyperpay" }?.adapter)
            func sar(_ value: Int64) -> Money { Money(value: value, currency: "SAR") }
            let captures = [CaptureReference(providerReference: cp1, amount: sar(5000)), CaptureReference(providerReference: cp2, amount: sar(3000))]
            func refund(_ key: String, _ amount: Int64, refunded: Int64?, captures: [CaptureReference]? = captures) -> AmountRequest {
                AmountRequest(paymentId: paid.id, idempotencyKey: "\(paid.id):refund:\(key)", providerReference: reference, amount: sar(amount),
                              captures: captures, alreadyRefunded: refunded.map(sar))
            }

            let spanning = try await adapter.call(.refund, refund("r-1", 6000, refunded: 0))
            #expect(spanning.status == .succeeded)
            #expect(spanning.amount == sar(6000))
            #expect(simulator.refunds(of: cp1) == (1, 5000))
            #expect(simulator.refunds(of: cp2) == (1, 1000))
            #expect(simulator.refunds(of: preAuthorisation).count == 0)

            let retried = try await adapter.call(.refund, refund("r-1", 6000, refunded: 0))
            #expect(retried.status == .succeeded)
            #expect(retried.amount == sar(6000))
            #expect(simulator.refunds(of: cp1) == (1, 5000), "each part was answered from its first try")
            #expect(simulator.refunds(of: cp2) == (1, 1000))

            let later = try await adapter.call(.refund, refund("r-2", 1500, refunded: 6000))
            #expect(later.status == .succeeded)
            #expect(simulator.refunds(of: cp1) == (1, 5000), "the first capture was used up by the first refund")
            #expect(simulator.refunds(of: cp2) == (2, 2500))

            // More than the captures leave: refused before anything is sent.
            await #expect(throws: AdapterCallError.self) { try await adapter.call(.refund, refund("r-3", 600, refunded: 7500)) }
            #expect(simulator.refunds(of: cp2) == (2, 2500))
            // Without the captures, the RF goes to the PA, which OPPWA refuses with its invalid-type code.
            let onThePA = try await adapter.call(.refund, refund("r-4", 500, refunded: nil, captures: nil))
            #expect(onThePA.status == .failed)
            #expect(onThePA.problem?.providerCode == "700.300.100")
            #expect(onThePA.problem?.code == .invalidState)
            #expect(simulator.refunds(of: preAuthorisation).count == 0)
        }
    }

    @Test func anUncapturedPreAuthorizationIsReversed() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            let void = try await fx.gateway.void(payment: paid.id, idempotencyKey: "void-1")
            #expect(void.balance.capturable == 0)
            // The reversal is real at the provider: a capture is now refused there.
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-after-void") }
            #expect(simulator.charges == 0)
        }
    }

    @Test(arguments: [
        ("decline", nil, "failed", "card_declined"),
        ("decline", "800.100.155", "failed", "insufficient_funds"),
        ("cancel", nil, "cancelled", "user_cancelled"),
        ("decline", "800.120.100", "failed", "provider_error"),
        ("decline", "100.380.401", "failed", "authentication_failed"),
    ] as [(String, String?, String, String)])
    func aFailedResultCodeMapsToItsProblem(outcome: String, code: String?, status: String, problem: String) async throws {
        try await withGateway { fx, simulator in
            let result = try await pay(fx, try await start(fx), outcome: outcome, code: code)
            #expect(result.status.rawValue == status)
            #expect(result.problem?.code.rawValue == problem)
            #expect(result.problem?.providerCode == (code ?? (outcome == "cancel" ? "100.396.101" : "800.100.151")))
            #expect(simulator.charges == 0)
        }
    }

    @Test func aThrottledPaymentIsRetryable() async throws {
        try await withGateway { fx, _ in
            let result = try await pay(fx, try await start(fx), outcome: "decline", code: "800.120.100")
            #expect(result.problem?.retryable == true)
        }
    }

    @Test func aPaymentNeedingReviewSucceedsAndSaysReview() async throws {
        try await withGateway { fx, simulator in
            let result = try await pay(fx, try await start(fx), code: "000.400.000")
            #expect(result.status == .succeeded)
            #expect(result.providerStatus == "000.400.000 (review)")
            #expect(simulator.charges == 1)
        }
    }

    @Test(arguments: ["000.200.000", "800.400.500"])
    func aPendingResultLeavesTheAttemptPending(code: String) async throws {
        try await withGateway { fx, _ in
            let result = try await pay(fx, try await start(fx), code: code)
            #expect(result.status == .pending)
            #expect(result.providerStatus?.hasPrefix(code) == true)
            let verified = try await fx.gateway.verify(attempt: result.id)
            #expect(verified.status == .pending)
        }
    }

    @Test func aDroppedStatusAnswerLeavesThePaymentPendingAndVerifyFindsItChargedOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/checkouts/", method: "GET", fault: .drop))
            let returned = try await fx.returnWithoutParameters(started)
            #expect(returned.status == .pending)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aTimedOutStatusQueryLeavesThePaymentPendingAndVerifyFindsIt() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            // Longer than the request timeout (SandboxGateway.requestTimeout): the host gives up on the answer.
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/checkouts/", method: "GET", fault: .latency(milliseconds: SandboxGateway.pastRequestTimeout)))
            let returned = try await fx.returnWithoutParameters(started)
            #expect(returned.status == .pending)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    /// OPPWA documents no de-duplication of a capture by its
    /// `merchantTransactionId` (nor does the simulator keep one): the retry
    /// is answered from the transaction reports, never sent twice; while the
    /// reports cannot be read, nothing is sent.
    @Test func aDroppedCaptureRetriedUnderTheSameKeyCapturesOnce() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/payments/", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop") }
            #expect(simulator.charges == 1)
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/query", method: "GET", fault: .status(503)))
            await #expect(throws: Problem.self) { try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop") }
            #expect(simulator.charges == 1, "sent blind while the reports could not say")
            let retried = try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-drop")
            #expect(retried.balance.captured == 9200)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aCaptureWhoseLookupIsLostIsRefusedCleanlyAndNothingIsHeld() async throws {
        try await withGateway { fx, simulator in
            let paid = try await pay(fx, try await start(fx, capture: .manual))
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/checkouts/", method: "GET", fault: .drop))
            do {
                _ = try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-lookup-lost")
                Issue.record("the capture should have been refused")
            } catch let problem as Problem {
                #expect(problem.code == .providerError)
                #expect(problem.retryable)
            }
            #expect(simulator.charges == 0)
            let capture = try await fx.gateway.capture(payment: paid.id, idempotencyKey: "cap-again")
            #expect(capture.balance.captured == 9200)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aLostCheckoutPreparationChargesNothingAndMayGoElsewhere() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 9200, currency: "SAR"), country: "SA", orderId: "order-lost", returnUrl: Self.back))
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/checkouts", method: "POST", fault: .drop))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "visa"))
            let hyperpay = try await fx.attempt(by: "hyperpay", inSession: session.session.id)
            #expect(hyperpay.status == .failed)
            #expect(hyperpay.problem?.code == .providerError)
            // Provably not charged, so the engine may try the next provider at once.
            #expect(attempt.providerID != "hyperpay")
            #expect(simulator.charges == 0)
        }
    }

    @Test func anEncryptedNotificationIsAppliedAndAForgedOneRefused() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            try await fx.approveOnHostedPage(started)
            let checkoutId = try #require(started.attempt.providerReference?.split(separator: ":").last.map(String.init))
            let note = try #require(simulator.notification(forCheckout: checkoutId))

            var forgedHeaders = note.headers
            let tag = note.headers["X-Authentication-Tag"]!
            forgedHeaders["X-Authentication-Tag"] = (tag.first == "0" ? "1" : "0") + tag.dropFirst()
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "hyperpay", headers: forgedHeaders, body: note.body) }
            let otherKey = try #require(simulator.notification(forCheckout: checkoutId, key: String(repeating: "ab", count: 32)))
            await #expect(throws: Problem.self) { try await fx.gateway.webhook(provider: "hyperpay", headers: otherKey.headers, body: otherKey.body) }
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .pending)

            let outcome = try await fx.gateway.webhook(provider: "hyperpay", headers: note.headers, body: note.body)
            #expect(outcome == .applied(AttemptRef(sessionID: started.session, attemptID: started.attempt.id)))
            #expect(try await fx.gateway.session(started.session).session.attempts[0].status == .succeeded)
            #expect(try await fx.gateway.webhook(provider: "hyperpay", headers: note.headers, body: note.body) == .duplicate)
        }
    }
}
