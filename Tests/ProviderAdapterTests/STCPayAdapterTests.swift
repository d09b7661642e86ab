import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import TestSupport
import Testing

/// The STC Pay adapter through the real host (dlopen, bridge, engine) against
/// the simulator: phone normalisation, the OTP flow, every error class it
/// maps, lost answers reconciled by PaymentInquiry without charging twice,
/// and refunds.
///
/// STC Pay has no webhook, so the "webhook accepted / forged refused" check
/// of the other adapters does not apply: the manifest declares no `webhook`
/// operation and payments are verified by `PaymentInquiry`.
@Suite("STC Pay adapter through the host", .heavy)
struct STCPayAdapterTests {
    func withGateway(_ body: (SandboxGateway, STCPaySimulator) async throws -> Void) async throws {
        try await SandboxGateway.run(simulator: "stcpay", body)
    }

    /// A session and an STC Pay attempt for `phone`, pending at the OTP.
    func start(_ fx: SandboxGateway, phone: String = "0551234567", amount: Int64 = 15050) async throws -> StartedAttempt {
        let session = try await fx.gateway.createSession(NewSession(
            amount: Money(value: amount, currency: "SAR"), country: "SA", orderId: "order-\(UUID().uuidString.prefix(8))",
            payer: Payer(name: "Noura", phone: phone)))
        let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "stcpay", provider: "stcpay"))
        return (session.session.id, attempt)
    }

    func type(_ fx: SandboxGateway, _ started: StartedAttempt, _ otp: String) async throws -> Attempt {
        try await fx.gateway.proceed(session: started.session, attempt: started.attempt.id, PayerInput(otp: otp))
    }

    /// A code that is not `otp`.
    static func wrong(_ otp: String) -> String { otp == "000000" ? "111111" : "000000" }

    @Test func theRightOTPPaysOnceAndTheRefundGoesThrough() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            let action = try #require(started.attempt.action)
            #expect(action.type == .otp)
            #expect(action.otpLength == 6)
            #expect(action.expiresAt != nil)
            let otp = try #require(action.sandboxOtp)
            #expect(otp == simulator.otp(forRefNum: started.attempt.id))
            #expect(simulator.status(ofRefNum: started.attempt.id) == 1)
            #expect(simulator.charges == 0)
            let paid = try await type(fx, started, otp)
            #expect(paid.status == .succeeded)
            #expect(paid.providerStatus == "2")
            // 150.50 SAR went out as STC Pay's decimal and came back as 15050 halalas.
            #expect(paid.balance?.authorized == Money(value: 15050, currency: "SAR"))
            #expect(paid.balance?.captured == 15050)
            #expect(simulator.charges == 1)
            #expect(simulator.status(ofRefNum: started.attempt.id) == 2)
            let verified = try await fx.gateway.verify(attempt: paid.id)
            #expect(verified.status == .succeeded)
            let refund = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: "refund-1")
            #expect(refund.balance.refunded == 5000)
            #expect(simulator.charges == 1)
        }
    }

    @Test(arguments: [("0551234567", "966551234567"), ("+966 55 123 4567", "966551234567"), ("00966-55-123-4567", "966551234567"),
                      ("966551234567", "966551234567"), ("55 123 4567", "966551234567"), ("+966 055 123 4567", "966551234567")])
    func whatAPayerTypesIsNormalisedToInternationalForm(typed: String, sent: String) async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, phone: typed)
            #expect(started.attempt.status == .pending)
            #expect(simulator.mobileNumber(ofRefNum: started.attempt.id) == sent)
        }
    }

    @Test(arguments: ["0112345678", "+971501234567", "05512345", "05x1234567", ""])
    func aNumberThatIsNotASaudiMobileIsRefusedBeforeAnythingIsSent(phone: String) async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "order-bad-phone", payer: Payer(phone: phone)))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "stcpay", provider: "stcpay"))
            #expect(attempt.status == .failed)
            #expect(attempt.problem?.code == .invalidRequest)
            #expect(attempt.problem?.detail.contains("payer.phone") == true)
            #expect(simulator.status(ofRefNum: attempt.id) == nil)
        }
    }

    /// `BillNumber` (the order id) at most 50 characters, as the simulator
    /// holds STC Pay to (no published length; the adapter refuses past it
    /// rather than cut an id the merchant reconciles by): at 50 it is sent
    /// whole, at 51 refused before anything is sent.
    @Test(arguments: [50, 51])
    func anOrderIdPastFiftyCharactersIsRefusedBeforeSending(length: Int) async throws {
        try await withGateway { fx, simulator in
            let orderId = String(repeating: "b", count: length)
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: orderId, payer: Payer(phone: "0559876543")))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "stcpay", provider: "stcpay"))
            if length <= 50 {
                #expect(attempt.status == .pending, "\(String(describing: attempt.problem))")
                #expect(simulator.billNumber(ofRefNum: attempt.id) == orderId)
            } else {
                #expect(attempt.status == .failed)
                #expect(attempt.problem?.code == .invalidRequest)
                #expect(simulator.status(ofRefNum: attempt.id) == nil)
            }
        }
    }

    @Test func theInstrumentPhoneIsUsedWhenThePayerHasNone() async throws {
        try await withGateway { fx, simulator in
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "order-instrument"))
            let attempt = try await fx.gateway.attempt(session: session.session.id,
                                                       NewAttempt(method: "stcpay", provider: "stcpay", instrument: ["phone": .string("0559876543")]))
            #expect(attempt.status == .pending)
            #expect(simulator.mobileNumber(ofRefNum: attempt.id) == "966559876543")
        }
    }

    @Test func aWrongOTPIsRetryableWithTheSameActionAndTheRightOneThenPays() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            let wrong = try await type(fx, started, Self.wrong(otp))
            #expect(wrong.status == .pending)
            #expect(wrong.problem?.code == .otpInvalid)
            #expect(wrong.problem?.retryable == true)
            #expect(wrong.action?.type == .otp)
            #expect(wrong.action?.sandboxOtp == otp)
            #expect(wrong.action?.expiresAt == started.attempt.action?.expiresAt)
            #expect(simulator.charges == 0)
            let paid = try await type(fx, started, otp)
            #expect(paid.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func threeWrongOTPsBurnTheCodeAndFailThePayment() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            for _ in 0..<2 { #expect(try await type(fx, started, Self.wrong(otp)).status == .pending) }
            let burned = try await type(fx, started, Self.wrong(otp))
            #expect(burned.status == .failed)
            #expect(burned.problem?.code == .otpAttemptsExceeded)
            #expect(burned.problem?.retryable == false)
            #expect(simulator.charges == 0)
        }
    }

    @Test func anExpiredRequestFailsAsExpiredAndIsNotRetryable() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            #expect(simulator.expire(reference: started.attempt.id))
            let expired = try await type(fx, started, otp)
            #expect(expired.status == .failed)
            #expect(expired.problem?.code == .expired)
            #expect(expired.problem?.retryable == false)
            #expect(expired.problem?.providerCode == "2026")
            #expect(simulator.charges == 0)
        }
    }

    @Test func verifyReportsAnUnpaidExpiredRequestAsFailed() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            #expect(try await fx.gateway.verify(attempt: started.attempt.id).status == .pending)
            simulator.expire(reference: started.attempt.id)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .failed)
            #expect(verified.problem?.code == .expired)
        }
    }

    @Test func anEmptyWalletFailsWithInsufficientFunds() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, phone: "0551230000")
            let result = try await type(fx, started, try #require(started.attempt.action?.sandboxOtp))
            #expect(result.status == .failed)
            #expect(result.problem?.code == .insufficientFunds)
            #expect(result.problem?.providerCode == "2023")
            #expect(simulator.charges == 0)
        }
    }

    @Test func aPayerWhoCancelsInTheAppIsCancelled() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx, phone: "0551230027")
            let result = try await type(fx, started, try #require(started.attempt.action?.sandboxOtp))
            #expect(result.status == .cancelled)
            #expect(result.problem?.code == .userCancelled)
            #expect(simulator.status(ofRefNum: started.attempt.id) == 4)
            #expect(try await fx.gateway.verify(attempt: started.attempt.id).status == .cancelled)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aConfirmWhoseAnswerIsLostIsReconciledByInquiryAndChargedOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/DirectPaymentConfirm", method: "POST", fault: .drop))
            let lost = try await type(fx, started, otp)
            #expect(lost.status == .pending)
            #expect(simulator.charges == 1)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func anOTPTypedAgainAfterALostConfirmFindsThePaymentAlreadyPaid() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/DirectPaymentConfirm", method: "POST", fault: .drop))
            #expect(try await type(fx, started, otp).status == .pending)
            // STC Pay answers 2009 already paid; the adapter asks PaymentInquiry and reports it.
            let again = try await type(fx, started, otp)
            #expect(again.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func aConfirmThatTimesOutIsLeftPendingThenVerifiedWithoutASecondCharge() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let otp = try #require(started.attempt.action?.sandboxOtp)
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/DirectPaymentConfirm", method: "POST",
                                        fault: .latency(milliseconds: SandboxGateway.pastRequestTimeout)))
            let timedOut = try await type(fx, started, otp)
            #expect(timedOut.status == .pending)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .succeeded)
            #expect(simulator.charges == 1)
        }
    }

    @Test func anAuthorizeWhoseAnswerIsLostStaysPendingAndInquirySeesIt() async throws {
        try await withGateway { fx, simulator in
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/DirectPaymentAuthorize", method: "POST", fault: .drop))
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            #expect(simulator.status(ofRefNum: started.attempt.id) == 1)
            #expect(try await fx.gateway.verify(attempt: started.attempt.id).status == .pending)
            #expect(simulator.charges == 0)
        }
    }

    @Test func aRefundWhoseAnswerIsLostIsRetriedWithTheSameReferenceAndRefundsOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let paid = try await type(fx, started, try #require(started.attempt.action?.sandboxOtp))
            #expect(paid.status == .succeeded)
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/RefundPayment", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: "refund-lost") }
            #expect(simulator.refunded(ofRefNum: paid.id) == 5000)
            let retried = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: "refund-lost")
            #expect(retried.balance.refunded == 5000)
            #expect(simulator.refunded(ofRefNum: paid.id) == 5000)
        }
    }

    /// A merchant's idempotency key may have 255 bytes, and the engine sends
    /// `<payment id>:refund:<key>`: far more than STC Pay's RefNum takes. The
    /// refund still goes through, under a RefNum STC Pay accepts, and a retry
    /// after a lost answer is the same RefNum, so STC Pay refunds once. Two
    /// long keys that differ only at their end are two refunds.
    @Test func aRefundUnderA255ByteKeyGoesThroughAndItsRetryRefundsOnce() async throws {
        try await withGateway { fx, simulator in
            let started = try await start(fx)
            let paid = try await type(fx, started, try #require(started.attempt.action?.sandboxOtp))
            #expect(paid.status == .succeeded)
            let stem = "refund/order-4711/" + String(repeating: "é", count: 40) + ":"
            let key = stem + String(repeating: "k", count: 255 - stem.utf8.count)
            #expect(key.utf8.count == 255)
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/RefundPayment", method: "POST", fault: .drop))
            await #expect(throws: Problem.self) { try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: key) }
            #expect(simulator.refunded(ofRefNum: paid.id) == 5000)
            let retried = try await fx.gateway.refund(payment: paid.id, amount: 5000, idempotencyKey: key)
            #expect(retried.balance.refunded == 5000)
            #expect(simulator.refunded(ofRefNum: paid.id) == 5000, "the retry was the same RefNum: refunded once")
            let references = simulator.refundReferences(ofRefNum: paid.id)
            #expect(references.count == 1)
            #expect(references.allSatisfy { $0.count <= 100 && $0.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) } })

            let other = String(key.dropLast()) + "j"
            let second = try await fx.gateway.refund(payment: paid.id, amount: 1000, idempotencyKey: other)
            #expect(second.balance.refunded == 6000)
            #expect(simulator.refunded(ofRefNum: paid.id) == 6000)
            #expect(Set(simulator.refundReferences(ofRefNum: paid.id)).count == 2)
        }
    }

    @Test func anAuthorizeRefusedWithA5xxIsUnknownUntilInquiryShowsNothingWasAsked() async throws {
        try await withGateway { fx, simulator in
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/DirectPaymentAuthorize", method: "POST", fault: .status(503)))
            let started = try await start(fx)
            #expect(started.attempt.status == .pending)
            let verified = try await fx.gateway.verify(attempt: started.attempt.id)
            #expect(verified.status == .failed)
            #expect(verified.problem?.code == .unknownPayment)
            #expect(simulator.charges == 0)
        }
    }
}
