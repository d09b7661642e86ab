import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import ProviderSandbox
import Testing

/// The Tamara simulator over HTTP: Tamara's paths, members, statuses and
/// error shape, the approval page, notifications and expiry.
@Suite("Tamara simulator")
struct TamaraSimulatorTests {
    func withSimulator(_ body: (TamaraSimulatorFixture) async throws -> Void) async throws {
        let fx = try await TamaraSimulatorFixture.start()
        do { try await body(fx) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    @Test func aCheckoutAnswersTheOrderAndAPageAndTheOrderIsNew() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            #expect(created["status"] == "new")
            #expect(created["checkout_id"] != nil)
            let url = try #require(created["checkout_url"])
            #expect(url.hasPrefix(fx.base + "/checkout/"))
            let order = try await fx.request("GET", "/orders/\(created["order_id"]!)")
            #expect(order["status"] == "new")
            #expect(order["order_reference_id"] == "ref-1")
            // Amounts are JSON numbers in major units.
            #expect(order.text.contains("\"total_amount\":{\"amount\":300.00,\"currency\":\"SAR\"}"))
            let page = try await fx.request("GET", url, token: nil)
            #expect(page.status == 200)
            #expect(page.text.contains("300.00 SAR") && page.text.contains("<form"))
        }
    }

    @Test func aKuwaitiDinarAmountKeepsItsThreeDecimals() async throws {
        try await withSimulator { fx in
            let created = try await fx.create(amount: "1.234", currency: "KWD", country: "KW")
            let order = try await fx.request("GET", "/orders/\(created["order_id"]!)")
            #expect(order.text.contains("\"amount\":1.234,\"currency\":\"KWD\""))
        }
    }

    @Test func aRequestWithoutTheAPITokenIsRefusedInTamarasErrorShape() async throws {
        try await withSimulator { fx in
            let answer = try await fx.request("POST", "/checkout", json: TamaraSimulatorFixture.checkout(), token: "wrong")
            #expect(answer.status == 401)
            #expect(answer["message"] == "Unauthorized")
            #expect(answer.errorCode == "unauthorized")
        }
    }

    @Test(arguments: [
        ("300", "KWD", "SA", "currency_not_supported_for_country"),
        ("300.001", "SAR", "SA", "invalid_amount"),
        ("-5", "SAR", "SA", "invalid_amount"),
        ("300", "USD", "SA", "invalid_currency"),
        ("300", "SAR", "EG", "invalid_country_code"),
    ])
    func aBadCheckoutIsRefusedWithTheField(amount: String, currency: String, country: String, code: String) async throws {
        try await withSimulator { fx in
            let answer = try await fx.request("POST", "/checkout", json: TamaraSimulatorFixture.checkout(amount: amount, currency: currency, country: country))
            #expect(answer.status == 400)
            #expect(answer.errorCode == code)
            #expect(answer.json["message"] as? String == "Invalid request")
        }
    }

    @Test func approvingSendsThePayerToSuccessAndRecordsASignedNotification() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = try #require(created["order_id"])
            let step = try await fx.payer(created["checkout_url"]!, "approve")
            #expect(step.status == 302)
            #expect(step.location == "https://shop.example/ok?orderId=\(orderId)&paymentStatus=approved")
            #expect(fx.tamara.status(ofOrder: orderId) == "approved")
            let note = try #require(fx.tamara.notification(forOrder: orderId))
            let body = try #require(try JSONSerialization.jsonObject(with: note.body) as? [String: Any])
            #expect(body["order_id"] as? String == orderId)
            #expect(body["event_type"] as? String == "order_approved")
            #expect(body["order_status"] as? String == "approved")
            #expect(note.headers["Authorization"] == "Bearer " + note.token)
            #expect(note.url == "https://shop.example/notify?tamaraToken=" + note.token)
            // HS256 over header.payload with the notification token.
            let parts = note.token.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let mac = HMAC<SHA256>.authenticationCode(for: Data((parts[0] + "." + parts[1]).utf8),
                                                      using: SymmetricKey(data: Data(TamaraSimulator.notificationToken.utf8)))
            let signature = Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(parts[2] == signature)
        }
    }

    @Test func anApprovedOrderIsAuthorisedCapturedAndRefundedOnce() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = try #require(created["order_id"])
            let early = try await fx.request("POST", "/orders/\(orderId)/authorise")
            #expect(early.status == 400)
            #expect(early.errorCode == "order_status_not_allowed_to_authorise")
            _ = try await fx.payer(created["checkout_url"]!, "approve")
            let authorised = try await fx.request("POST", "/orders/\(orderId)/authorise")
            #expect(authorised.status == 200)
            #expect(authorised["status"] == "authorised")
            #expect(authorised.json["auto_captured"] as? Bool == false)
            #expect(authorised.text.contains("\"authorized_amount\":{\"amount\":300.00"))
            let capture = #"{"order_id":"\#(orderId)","total_amount":{"amount":100.5,"currency":"SAR"},"shipping_info":{"shipped_at":"2026-11-22T10:00:00Z","shipping_company":"DHL"}}"#
            let first = try await fx.request("POST", "/payments/capture", json: capture)
            #expect(first["status"] == "partially_captured")
            #expect(first.text.contains("\"captured_amount\":{\"amount\":100.50"))
            let rest = capture.replacingOccurrences(of: "100.5", with: "199.5")
            #expect(try await fx.request("POST", "/payments/capture", json: rest)["status"] == "fully_captured")
            let again = try await fx.request("POST", "/payments/capture", json: rest)
            #expect(again.status == 400)
            #expect(again.errorCode == "order_status_not_allowed_to_capture")
            #expect(fx.tamara.charges == 2)
            let refund = #"{"total_amount":{"amount":50,"currency":"SAR"},"comment":"damaged","merchant_refund_id":"r-1"}"#
            let refunded = try await fx.request("POST", "/payments/simplified-refund/\(orderId)", json: refund)
            #expect(refunded["status"] == "partially_refunded")
            let replay = try await fx.request("POST", "/payments/simplified-refund/\(orderId)", json: refund)
            #expect(replay["refund_id"] == refunded["refund_id"])
            let order = try await fx.request("GET", "/orders/\(orderId)")
            #expect(order.text.contains("\"refunded_amount\":{\"amount\":50.00"))
        }
    }

    /// The official PHP SDK's capture: `shipping_info` with `shipped_at`
    /// and `shipping_company`, its tracking members `null`. Without either
    /// required member it is refused, naming it.
    @Test func aCaptureWhoseTrackingMembersAreNullIsTakenAsTheOfficialSDKSendsIt() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = try #require(created["order_id"])
            _ = try await fx.payer(created["checkout_url"]!, "approve")
            #expect(try await fx.request("POST", "/orders/\(orderId)/authorise").status == 200)
            for (shipping, field) in [(#"{"shipped_at":"2026-11-22T10:00:00+00:00","shipping_company":null}"#, "shipping_company"),
                                      (#"{"shipping_company":"N/A","tracking_number":null}"#, "shipped_at")] {
                let refused = try await fx.request("POST", "/payments/capture", json: #"{"order_id":"\#(orderId)","total_amount":{"amount":300,"currency":"SAR"},"shipping_info":\#(shipping)}"#)
                #expect(refused.status == 400, "\(refused.text)")
                #expect(refused.errorCode == "\(field)_required", "\(refused.text)")
            }
            let capture = #"{"order_id":"\#(orderId)","total_amount":{"amount":300,"currency":"SAR"},"shipping_info":{"shipped_at":"2026-11-22T10:00:00+00:00","shipping_company":"N/A","tracking_number":null,"tracking_url":null}}"#
            let captured = try await fx.request("POST", "/payments/capture", json: capture)
            #expect(captured.status == 200, "\(captured.text)")
            #expect(captured["status"] == "fully_captured")
            #expect(fx.tamara.charges == 1)
        }
    }

    /// `GET /merchants/orders/reference-id/{ref}`: the order made under the
    /// merchant's reference, as `GET /merchants/orders/{id}` and
    /// `GET /orders/{id}` answer it; an unknown reference is a 404.
    @Test func anOrderIsFoundUnderTheMerchantsReference() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = try #require(created["order_id"])
            let reference = "ref-1" // TamaraSimulatorFixture.checkout's
            let found = try await fx.request("GET", "/merchants/orders/reference-id/\(reference)")
            #expect(found.status == 200)
            #expect(found["order_id"] == orderId)
            #expect(found["status"] == "new")
            let merchants = try await fx.request("GET", "/merchants/orders/\(orderId)")
            #expect(merchants.text == (try await fx.request("GET", "/orders/\(orderId)")).text)
            let unknown = try await fx.request("GET", "/merchants/orders/reference-id/no-such-reference")
            #expect(unknown.status == 404)
            #expect(try await fx.request("GET", "/merchants/orders/reference-id/\(reference)", token: "wrong").status == 401)
        }
    }

    @Test func declineAndCancelSendThePayerToTheirURLs() async throws {
        try await withSimulator { fx in
            let declined = try await fx.create()
            let step = try await fx.payer(declined["checkout_url"]!, "decline")
            #expect(step.location?.hasPrefix("https://shop.example/failed?orderId=") == true)
            #expect(step.location?.hasSuffix("paymentStatus=declined") == true)
            #expect(fx.tamara.status(ofOrder: declined["order_id"]!) == "declined")

            let cancelled = try await fx.create()
            let back = try await fx.payer(cancelled["checkout_url"]!, "cancel")
            #expect(back.location?.hasPrefix("https://shop.example/cancelled?orderId=") == true)
            #expect(fx.tamara.status(ofOrder: cancelled["order_id"]!) == "new")
            let void = try await fx.request("POST", "/checkout/\(cancelled["checkout_id"]!)/void?order_id=\(cancelled["order_id"]!)")
            #expect(void.json["order_was_voided"] as? Bool == true)
            #expect(fx.tamara.status(ofOrder: cancelled["order_id"]!) == "canceled")
        }
    }

    @Test func anUnapprovedOrderExpiresOnceAged() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = created["order_id"]!
            #expect(fx.tamara.age(order: orderId, by: 29 * 60))
            #expect(fx.tamara.status(ofOrder: orderId) == "new")
            fx.tamara.age(order: orderId, by: 2 * 60)
            #expect(try await fx.request("GET", "/orders/\(orderId)")["status"] == "expired")
            let step = try await fx.payer(created["checkout_url"]!, "approve")
            #expect(step.location?.hasSuffix("paymentStatus=expired") == true)
            #expect(fx.tamara.notification(forOrder: orderId, event: "order_expired") != nil)
        }
    }

    @Test func anAuthorisedOrderIsCanceled() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = created["order_id"]!
            _ = try await fx.payer(created["checkout_url"]!, "approve")
            _ = try await fx.request("POST", "/orders/\(orderId)/authorise")
            let cancel = try await fx.request("POST", "/orders/\(orderId)/cancel", json: #"{"total_amount":{"amount":300,"currency":"SAR"}}"#)
            #expect(cancel["status"] == "canceled")
            #expect(cancel["cancel_id"] != nil)
            #expect(fx.tamara.charges == 0)
        }
    }

    @Test func aCaptureWhoseAnswerIsDroppedIsFoundByTheOrderQuery() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let orderId = created["order_id"]!
            _ = try await fx.payer(created["checkout_url"]!, "approve")
            _ = try await fx.request("POST", "/orders/\(orderId)/authorise")
            fx.sandbox.faults.add(.init(provider: "tamara", path: "/payments/capture", fault: .drop))
            let capture = #"{"order_id":"\#(orderId)","total_amount":{"amount":300,"currency":"SAR"},"shipping_info":{"shipped_at":"2026-11-22T10:00:00Z","shipping_company":"DHL"}}"#
            await #expect(throws: (any Error).self) { _ = try await fx.request("POST", "/payments/capture", json: capture) }
            #expect(try await fx.request("GET", "/orders/\(orderId)")["status"] == "fully_captured")
            #expect(fx.tamara.charges == 1)
        }
    }

    @Test func thePagesFormCompletesTheApprovalAsABrowserWould() async throws {
        try await withSimulator { fx in
            let created = try await fx.create()
            let url = try #require(created["checkout_url"])
            let page = try await fx.request("GET", url, token: nil)
            #expect(page.text.contains("action=\"\(created["checkout_id"]!)\""))
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: "outcome=approve"))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            let response = try await client.execute(request, timeout: .seconds(60))
            try await client.shutdown()
            #expect(response.status.code == 302)
            #expect(response.headers.first(name: "location")?.hasSuffix("paymentStatus=approved") == true)
            #expect(fx.tamara.status(ofOrder: created["order_id"]!) == "approved")
        }
    }
}
