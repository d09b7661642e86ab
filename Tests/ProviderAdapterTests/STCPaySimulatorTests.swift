import Foundation
import ProviderSandbox
import Testing

/// The STC Pay simulator over HTTP: DirectPayment V4's paths, wrapped
/// messages, `{Code, Text}` errors, OTP attempts and expiry, the sandbox
/// numbers' outcomes, PaymentInquiry statuses and idempotent refunds.
@Suite("STC Pay simulator")
struct STCPaySimulatorTests {
    func withSimulator(_ body: (STCPaySimulatorFixture) async throws -> Void) async throws {
        let fx = try await STCPaySimulatorFixture.start()
        do { try await body(fx) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    @Test func anAuthorizeAndTheRightOTPPayTheExactAmountOnce() async throws {
        try await withSimulator { fx in
            let started = try await fx.authorize(refNum: "pay-1", amount: "1234567.89")
            #expect(started.otp.count == 6)
            #expect(try await fx.inquiry("pay-1").first?["PaymentStatus"] as? Int == 1)
            let answer = try await fx.confirm(started)
            #expect(answer.status == 200)
            #expect(answer.text.contains("\"Amount\":1234567.89"))
            let message = answer.message("DirectPaymentConfirm")
            #expect(message["PaymentStatus"] as? Int == 2)
            #expect(message["STCPayRefNum"] as? String != nil)
            #expect(fx.stcpay.charges == 1)
            let again = try await fx.confirm(started)
            #expect(again.status == 400)
            #expect(again.code == 2009)
            #expect(fx.stcpay.charges == 1)
            #expect(try await fx.inquiry("pay-1").first?["PaymentStatus"] as? Int == 2)
        }
    }

    @Test func aRequestWithoutTheMerchantsClientCodeIsUnauthorized() async throws {
        try await withSimulator { fx in
            let answer = try await fx.call("PaymentInquiry", "{\"RefNum\": \"x\"}", clientCode: nil)
            #expect(answer.status == 401)
            #expect(answer.code != nil)
            #expect((answer.json["Text"] as? String)?.contains("X-ClientCode") == true)
            #expect(try await fx.call("PaymentInquiry", "{\"RefNum\": \"x\"}", clientCode: "someone-else").status == 401)
        }
    }

    @Test(arguments: [
        "{\"RefNum\": \"x\"}",
        "{\"DirectPaymentAuthorizeV4RequestMessage\": {\"MobileNo\": \"0551234567\", \"RefNum\": \"r\", \"BillNumber\": \"b\", \"Amount\": 10}}",
        "{\"DirectPaymentAuthorizeV4RequestMessage\": {\"MobileNo\": \"966551234567\", \"RefNum\": \"r\", \"BillNumber\": \"b\", \"Amount\": 10.005}}",
        "{\"DirectPaymentAuthorizeV4RequestMessage\": {\"MobileNo\": \"966551234567\", \"RefNum\": \"r\", \"BillNumber\": \"b\", \"Amount\": \"ten\"}}",
        "not json",
    ])
    func aMalformedAuthorizeIsBadFormat2001(body: String) async throws {
        try await withSimulator { fx in
            let answer = try await fx.post("DirectPaymentAuthorize", raw: body)
            #expect(answer.status == 400)
            #expect(answer.code == 2001)
            #expect(answer.json["Text"] is String)
        }
    }

    @Test func wrongOTPsAreMismatchesUntilTheThirdBurnsTheCode() async throws {
        try await withSimulator { fx in
            let started = try await fx.authorize(refNum: "pay-otp")
            let wrong = started.otp == "000000" ? "111111" : "000000"
            #expect(try await fx.confirm(started, otp: wrong).code == 2037)
            #expect(try await fx.confirm(started, otp: wrong).code == 2037)
            #expect(try await fx.confirm(started, otp: wrong).code == 2031)
            #expect(try await fx.confirm(started).code == 2031)
            #expect(try await fx.inquiry("pay-otp").first?["PaymentStatus"] as? Int == 5)
            #expect(fx.stcpay.charges == 0)
        }
    }

    @Test func anExpiredRequestAnswers2026AndInquiresAsExpired() async throws {
        try await withSimulator { fx in
            let started = try await fx.authorize(refNum: "pay-exp")
            #expect(fx.stcpay.expire(reference: "pay-exp"))
            #expect(try await fx.confirm(started).code == 2026)
            #expect(try await fx.inquiry("pay-exp").first?["PaymentStatus"] as? Int == 5)
            // A new authorize under the same RefNum starts over.
            let again = try await fx.authorize(refNum: "pay-exp")
            #expect(again.pmtReference != started.pmtReference)
            #expect(try await fx.confirm(again).status == 200)
        }
    }

    @Test func aRepeatedAuthorizeWhilePendingAnswersTheSameReferences() async throws {
        try await withSimulator { fx in
            let first = try await fx.authorize(refNum: "pay-rep")
            let second = try await fx.authorize(refNum: "pay-rep")
            #expect(first.pmtReference == second.pmtReference)
            #expect(first.otp == second.otp)
            #expect(try await fx.inquiry("pay-rep").count == 1)
        }
    }

    @Test func sandboxNumbersDecideInsufficientFundsAndCancellation() async throws {
        try await withSimulator { fx in
            let poor = try await fx.authorize(refNum: "pay-poor", mobile: "966551230000")
            #expect(try await fx.confirm(poor).code == 2023)
            let cancelled = try await fx.authorize(refNum: "pay-cancel", mobile: "966551230027")
            #expect(try await fx.confirm(cancelled).code == 2027)
            #expect(try await fx.inquiry("pay-cancel").first?["PaymentStatus"] as? Int == 4)
            #expect(fx.stcpay.charges == 0)
        }
    }

    @Test func aRefundIsIdempotentByItsRefNumAndBoundedByThePayment() async throws {
        try await withSimulator { fx in
            let started = try await fx.authorize(refNum: "pay-ref", amount: "100.00")
            let paid = try await fx.confirm(started).message("DirectPaymentConfirm")
            let stcPayRefNum = try #require(paid["STCPayRefNum"] as? String)
            let first = try await fx.call("RefundPayment", "{\"STCPayRefNum\": \"\(stcPayRefNum)\", \"Amount\": 40.25, \"RefNum\": \"rf-1\"}")
            #expect(first.status == 200)
            let retry = try await fx.call("RefundPayment", "{\"STCPayRefNum\": \"\(stcPayRefNum)\", \"Amount\": 40.25, \"RefNum\": \"rf-1\"}")
            #expect(retry.message("RefundPayment")["NewSTCPayRefNum"] as? String == first.message("RefundPayment")["NewSTCPayRefNum"] as? String)
            #expect(try await fx.inquiry("pay-ref").first?["RefundedAmount"] as? Double == 40.25)
            let tooMuch = try await fx.call("RefundPayment", "{\"STCPayRefNum\": \"\(stcPayRefNum)\", \"Amount\": 60, \"RefNum\": \"rf-2\"}")
            #expect(tooMuch.code == 2001)
            #expect(fx.stcpay.charges == 1)
        }
    }

    @Test func anInquiryOfAnUnknownRefNumListsNothing() async throws {
        try await withSimulator { fx in
            let list = try await fx.inquiry("never-seen")
            #expect(list.isEmpty)
        }
    }

    @Test func aStatusFaultAnswersInSTCPaysErrorShape() async throws {
        try await withSimulator { fx in
            fx.sandbox.faults.add(.init(provider: "stcpay", path: "/B2B.DirectPayment.WebApi/DirectPayment/V4/PaymentInquiry", method: "POST", fault: .status(503)))
            let answer = try await fx.call("PaymentInquiry", "{\"RefNum\": \"x\"}")
            #expect(answer.status == 503)
            #expect(answer.code == 503)
            #expect(answer.json["Text"] is String)
        }
    }
}
