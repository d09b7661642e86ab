import Foundation
import ProviderSandbox
import Testing

/// The Tabby simulator over HTTP: Tabby's paths, members, statuses and error
/// shapes on both region hosts, the hosted page, expiry and idempotent money movement.
@Suite("Tabby simulator")
struct TabbySimulatorTests {
    func withSimulator(_ body: (TabbySimulatorFixture) async throws -> Void) async throws {
        let fx = try await TabbySimulatorFixture.start()
        do { try await body(fx) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    static func seconds(_ text: Any?) -> Date? {
        (text as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    @Test func aCheckoutIsCreatedWithAHostedPageAndAPaymentThatExpiresInThirtyMinutes() async throws {
        try await withSimulator { fx in
            let answer = try await fx.checkout()
            #expect(answer.status == 200)
            #expect(answer.json["status"] as? String == "created")
            #expect(answer.payment["status"] as? String == "CREATED")
            #expect(answer.payment["amount"] as? String == "100.00")
            #expect(answer.payment["currency"] as? String == "SAR")
            let created = try #require(Self.seconds(answer.payment["created_at"]))
            let expires = try #require(Self.seconds(answer.payment["expires_at"]))
            #expect(expires.timeIntervalSince(created) == 1800)
            let (_, url) = try await fx.created()
            let page = try await fx.request("GET", url)
            #expect(page.status == 200)
            #expect(page.text.contains("100.00 SAR") && page.text.contains("<form method=\"post\""))
        }
    }

    @Test func aKuwaitiDinarPaymentKeepsThreeDecimalsOnTheUAEHost() async throws {
        try await withSimulator { fx in
            let answer = try await fx.checkout("ai", TabbySimulatorFixture.session(amount: "1.234", currency: "KWD", phone: "+96590000001"))
            #expect(answer.status == 200)
            #expect(answer.payment["amount"] as? String == "1.234")
            let tooPrecise = try await fx.checkout("ai", TabbySimulatorFixture.session(amount: "1.2345", currency: "KWD"))
            #expect(tooPrecise.status == 400)
            #expect(tooPrecise.json["errorType"] as? String == "bad_data")
        }
    }

    @Test func theWrongRegionsHostAnswers403NoPermission() async throws {
        try await withSimulator { fx in
            let answer = try await fx.checkout("ai", TabbySimulatorFixture.session(currency: "SAR"))
            #expect(answer.status == 403)
            #expect(answer.json["status"] as? String == "error")
            #expect(answer.json["errorType"] as? String == "no_permission")
            let aed = try await fx.checkout("sa", TabbySimulatorFixture.session(currency: "AED"))
            #expect(aed.status == 403)
            let (id, _) = try await fx.created("sa")
            let elsewhere = try await fx.request("GET", "/ai/api/v2/payments/\(id)")
            #expect(elsewhere.status == 403)
            #expect(try await fx.request("GET", "/sa/api/v2/payments/\(id)").status == 200)
        }
    }

    @Test(arguments: [
        ("otp.rejected@tabby.ai", "+966500000001", "100.00", "not_available"),
        ("someone@example.com", "+966500000002", "100.00", "not_available"),
        ("otp.success@tabby.ai", "+966500000001", "5000.01", "order_amount_too_high"),
        ("otp.success@tabby.ai", "+966500000001", "0.99", "order_amount_too_low"),
    ])
    func preScoringRejectsWithHTTP200AndAReason(email: String, phone: String, amount: String, reason: String) async throws {
        try await withSimulator { fx in
            let answer = try await fx.checkout("sa", TabbySimulatorFixture.session(amount: amount, email: email, phone: phone))
            #expect(answer.status == 200)
            #expect(answer.json["status"] as? String == "rejected")
            let products = (answer.json["configuration"] as? [String: Any])?["products"] as? [String: Any]
            let installments = products?["installments"] as? [String: Any]
            #expect(installments?["rejection_reason"] as? String == reason)
            #expect(installments?["is_available"] as? Bool == false)
        }
    }

    @Test func requestsWithoutTheSecretKeyAreNotAuthorized() async throws {
        try await withSimulator { fx in
            let answer = try await fx.request("POST", "/sa/api/v2/checkout", json: TabbySimulatorFixture.session(), key: "sk_test_wrong")
            #expect(answer.status == 401)
            #expect(answer.json["errorType"] as? String == "not_authorized")
            #expect(try await fx.request("GET", "/sa/api/v2/payments/x", key: nil).status == 401)
        }
    }

    @Test func anUnknownPaymentIsNotFoundAndAMalformedBodyIsBadData() async throws {
        try await withSimulator { fx in
            let missing = try await fx.request("GET", "/sa/api/v2/payments/00000000-0000-0000-0000-000000000000")
            #expect(missing.status == 404)
            #expect(missing.json["errorType"] as? String == "not_found")
            let malformed = try await fx.request("POST", "/sa/api/v2/checkout", raw: "{\"payment\": 5")
            #expect(malformed.status == 400)
            #expect(malformed.json["errorType"] as? String == "bad_data")
            var noEmail = TabbySimulatorFixture.session()
            var payment = noEmail["payment"] as! [String: Any]
            payment["buyer"] = ["phone": "+966500000001"]
            noEmail["payment"] = payment
            let refused = try await fx.checkout("sa", noEmail)
            #expect(refused.status == 400)
            #expect(refused.json["error"] as? String == "payment.buyer.email is required")
        }
    }

    @Test func anApprovedPaymentIsCapturedAndRefundedOnceForEachReference() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            let step = try await fx.request("GET", url + "?sandbox_outcome=approve")
            #expect(step.status == 302)
            #expect(step.location == "https://shop.example/ok?payment_id=\(id)")
            #expect(try await fx.request("GET", "/sa/api/v2/payments/\(id)").json["status"] as? String == "AUTHORIZED")

            let capture = try await fx.request("POST", "/sa/api/v2/payments/\(id)/captures", json: ["amount": "100.00", "reference_id": "cap-1"])
            #expect(capture.status == 200)
            #expect(capture.json["status"] as? String == "CLOSED")
            #expect(fx.tabby.charges == 1)
            let again = try await fx.request("POST", "/sa/api/v2/payments/\(id)/captures", json: ["amount": "100.00", "reference_id": "cap-1"])
            #expect(again.status == 200)
            #expect((again.json["captures"] as? [Any])?.count == 1)
            #expect(fx.tabby.charges == 1)

            let refund = try await fx.request("POST", "/sa/api/v2/payments/\(id)/refunds", json: ["amount": "40.00", "reference_id": "ref-1"])
            #expect(refund.status == 200)
            _ = try await fx.request("POST", "/sa/api/v2/payments/\(id)/refunds", json: ["amount": "40.00", "reference_id": "ref-1"])
            let read = try await fx.request("GET", "/sa/api/v2/payments/\(id)")
            #expect((read.json["refunds"] as? [[String: Any]])?.map { $0["amount"] as? String } == ["40.00"])
            let reused = try await fx.request("POST", "/sa/api/v2/payments/\(id)/refunds", json: ["amount": "10.00", "reference_id": "ref-1"])
            #expect(reused.status == 409)
            #expect(reused.json["errorType"] as? String == "conflict")
            let tooMuch = try await fx.request("POST", "/sa/api/v2/payments/\(id)/refunds", json: ["amount": "60.01", "reference_id": "ref-2"])
            #expect(tooMuch.status == 400)
        }
    }

    @Test func aPartialCaptureKeepsThePaymentAuthorizedAndCaptureBeyondItIsRefused() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            _ = try await fx.request("GET", url + "?sandbox_outcome=approve")
            let part = try await fx.request("POST", "/sa/api/v2/payments/\(id)/captures", json: ["amount": "30.00", "reference_id": "cap-a"])
            #expect(part.json["status"] as? String == "AUTHORIZED")
            let beyond = try await fx.request("POST", "/sa/api/v2/payments/\(id)/captures", json: ["amount": "70.01", "reference_id": "cap-b"])
            #expect(beyond.status == 400)
            #expect(beyond.json["errorType"] as? String == "bad_data")
            #expect(fx.tabby.charges == 1)
        }
    }

    @Test func closingAnAuthorizationReleasesItWithoutCapture() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            _ = try await fx.request("GET", url + "?sandbox_outcome=approve")
            let closed = try await fx.request("POST", "/sa/api/v2/payments/\(id)/close")
            #expect(closed.status == 200)
            #expect(closed.json["status"] as? String == "CLOSED")
            #expect((closed.json["captures"] as? [Any])?.isEmpty == true)
            let capture = try await fx.request("POST", "/sa/api/v2/payments/\(id)/captures", json: ["amount": "100.00", "reference_id": "late"])
            #expect(capture.status == 400)
            #expect(try await fx.request("POST", "/sa/api/v2/payments/\(id)/close").status == 400)
            #expect(fx.tabby.charges == 0)
        }
    }

    @Test(arguments: [("decline", "REJECTED", "https://shop.example/fail"), ("cancel", "EXPIRED", "https://shop.example/cancel")])
    func thePayersRefusalOnTheHostedPageIsNotAuthorized(outcome: String, status: String, back: String) async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            let step = try await fx.request("GET", url + "?sandbox_outcome=\(outcome)")
            #expect(step.status == 302)
            #expect(step.location == back + "?payment_id=\(id)")
            #expect(fx.tabby.status(ofPayment: id) == status)
            // A later approval changes nothing.
            _ = try await fx.request("GET", url + "?sandbox_outcome=approve")
            #expect(fx.tabby.status(ofPayment: id) == status)
        }
    }

    @Test func anUnapprovedPaymentExpiresThirtyMinutesAfterCreation() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            fx.tabby.age(payment: id, by: 29 * 60)
            #expect(try await fx.request("GET", "/sa/api/v2/payments/\(id)").json["status"] as? String == "CREATED")
            fx.tabby.age(payment: id, by: 60)
            #expect(try await fx.request("GET", "/sa/api/v2/payments/\(id)").json["status"] as? String == "EXPIRED")
            let step = try await fx.request("GET", url + "?sandbox_outcome=approve")
            #expect(step.location?.hasPrefix("https://shop.example/cancel") == true)
            #expect(fx.tabby.status(ofPayment: id) == "EXPIRED")
        }
    }

    @Test func theWebhookBodyIsThePaymentWithALowerCaseStatusAndTheRegisteredHeader() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            _ = try await fx.request("GET", url + "?sandbox_outcome=approve")
            let hook = try #require(fx.tabby.webhook(forPayment: id))
            #expect(hook.headers[TabbySimulator.webhookHeader] == TabbySimulator.webhookHeaderValue)
            let body = try #require(try JSONSerialization.jsonObject(with: hook.body) as? [String: Any])
            #expect(body["id"] as? String == id)
            #expect(body["status"] as? String == "authorized")
            #expect(body["amount"] as? String == "100.00")
            #expect(fx.tabby.webhook(forPayment: "nope") == nil)
        }
    }

    @Test func theHostedPagesFormApprovesThePaymentForAPersonInABrowser() async throws {
        try await withSimulator { fx in
            let (id, url) = try await fx.created()
            let step = try await fx.request("POST", url, raw: "outcome=approve", key: nil)
            #expect(step.status == 302)
            #expect(step.location == "https://shop.example/ok?payment_id=\(id)")
            #expect(fx.tabby.status(ofPayment: id) == "AUTHORIZED")
            let page = try await fx.request("GET", url, key: nil)
            #expect(page.text.contains("nothing left to approve"))
        }
    }
}
