import Crypto
import Foundation
import Testing
import ProviderSandbox

/// The HyperPay simulator over HTTP: OPPWA's paths, form encoding, result
/// codes, error shapes, widget pages and state.
@Suite("HyperPay simulator")
struct HyperPaySimulatorTests {
    func withSimulator(_ body: (HyperPaySimulatorFixture) async throws -> Void) async throws {
        let fx = try await HyperPaySimulatorFixture.start()
        do { try await body(fx) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    @Test func preparingACheckoutAnswersItsIdWithResultCode000_200_100() async throws {
        try await withSimulator { fx in
            let answer = try await fx.request("POST", "/v1/checkouts", form: [
                ("entityId", HyperPaySimulator.entityId), ("amount", "92.00"), ("currency", "SAR"), ("paymentType", "DB")])
            #expect(answer.status == 200)
            #expect(answer.code == "000.200.100")
            #expect((answer.json["result"] as? [String: Any])?["description"] as? String == "successfully created checkout")
            #expect((answer.json["id"] as? String)?.isEmpty == false)
            #expect(answer.json["buildNumber"] != nil && answer.json["timestamp"] != nil && answer.json["ndc"] != nil)
        }
    }

    @Test func aWrongOrMissingTokenIsRefusedWith401AndCode800_900_300() async throws {
        try await withSimulator { fx in
            let wrong = try await fx.request("POST", "/v1/checkouts", form: [("entityId", HyperPaySimulator.entityId)], token: "not-the-token")
            #expect(wrong.status == 401)
            #expect(wrong.code == "800.900.300")
            let missing = try await fx.request("GET", "/v1/checkouts/x/payment?entityId=\(HyperPaySimulator.entityId)", token: nil)
            #expect(missing.status == 401)
            #expect(missing.code == "800.900.300")
        }
    }

    @Test func anAmountWithTheWrongDecimalsIsAParameterError() async throws {
        try await withSimulator { fx in
            let answer = try await fx.request("POST", "/v1/checkouts", form: [
                ("entityId", HyperPaySimulator.entityId), ("amount", "92"), ("currency", "SAR"), ("paymentType", "XX")])
            #expect(answer.status == 400)
            #expect(answer.code == "200.300.404")
            let errors = (answer.json["result"] as? [String: Any])?["parameterErrors"] as? [[String: String]] ?? []
            #expect(Set(errors.compactMap { $0["name"] }) == ["amount", "paymentType"])
            #expect(errors.first { $0["name"] == "amount" }?["value"] == "92")
            // OPPWA's amount is [0-9]{1,10}\.[0-9]{2} whatever the currency:
            // KWD's three decimals are refused, two accepted (9.25 = 9250 fils).
            for wrong in ["9.250", "9.2", "12345678901.00", "9,25", "-9.25", "0.00"] {
                let kwd = try await fx.request("POST", "/v1/checkouts", form: [
                    ("entityId", HyperPaySimulator.entityId), ("amount", wrong), ("currency", "KWD"), ("paymentType", "DB")])
                #expect(kwd.status == 400, "\(wrong)")
            }
            let id = try await fx.prepare(amount: "9.25", currency: "KWD")
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            #expect(try await fx.status(id).json["amount"] as? String == "9.25")
        }
    }

    /// OPPWA's published lengths (`merchantInvoiceId` and
    /// `merchantTransactionId` 8 to 255, `customer.email` 6 to 128), refused
    /// as a parameter error past either end.
    @Test func labelsOutsideOPPWAsLengthsAreParameterErrors() async throws {
        try await withSimulator { fx in
            for (name, value) in [("merchantInvoiceId", String(repeating: "o", count: 7)), ("merchantInvoiceId", String(repeating: "o", count: 256)),
                                  ("customer.email", "a@b.c"), ("customer.email", String(repeating: "e", count: 117) + "@example.com"),
                                  ("merchantTransactionId", "att_1")] {
                let refused = try await fx.request("POST", "/v1/checkouts", form: [
                    ("entityId", HyperPaySimulator.entityId), ("amount", "92.00"), ("currency", "SAR"), ("paymentType", "DB"), (name, value)])
                #expect(refused.status == 400, "\(name) of \(value.count)")
            }
        }
    }

    @Test func beforeThePayerPaysTheStatusIsPendingAndAnUnknownCheckoutIsAParameterError() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare()
            let pending = try await fx.status(id)
            #expect(pending.status == 200)
            #expect(pending.code == "000.200.000")
            let wrongEntity = try await fx.status(id, entity: HyperPaySimulator.madaEntityId)
            #expect(wrongEntity.status == 400)
            let unknown = try await fx.status("NOSUCHCHECKOUT")
            #expect(unknown.status == 400)
            #expect(unknown.code == "200.300.404")
        }
    }

    @Test func anApprovedWidgetReturnsToTheShopWithIdAndResourcePathAndTheDebitIsCharged() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare(back: "https://shop.example/back?order=7")
            let page = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            #expect(page.status == 302)
            let location = try #require(page.location)
            #expect(location.hasPrefix("https://shop.example/back?order=7&id=\(id)&resourcePath="))
            #expect(location.contains("%2Fv1%2Fcheckouts%2F\(id)%2Fpayment"))
            let status = try await fx.status(id)
            #expect(status.code == "000.100.110")
            #expect(status.json["paymentType"] as? String == "DB")
            #expect(status.json["amount"] as? String == "92.00")
            #expect(status.json["currency"] as? String == "SAR")
            #expect(status.json["merchantTransactionId"] as? String == "att_00000001")
            #expect(fx.hyperpay.charges == 1)
            // The same outcome again changes nothing.
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            #expect(fx.hyperpay.charges == 1)
        }
    }

    /// COPYandPAY as its integration guide has the merchant write it, in a
    /// real browser: the merchant's page loads `/v1/paymentWidgets.js?checkoutId=…`
    /// and holds `form.paymentWidgets` whose `action` is where the shopper
    /// returns. The checkout was prepared without `shopperResultUrl`: the
    /// shopper pays, passes 3-D Secure, and lands on the form's `action` with
    /// `id` and `resourcePath`.
    @Test(.enabled(if: HeadlessBrowser.isAvailable, "chromium and chromedriver installed (scripts/install-prerequisites), GATEWAY_BROWSER_TESTS not 0"))
    func theWidgetScriptTurnsTheMerchantsFormIntoTheCardFormAndReturnsToItsAction() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare(back: nil)
            let back = "https://shop.example/hyperpay/return?order=7"
            let page = """
                <!doctype html><html><head><meta charset="utf-8"><title>Checkout</title></head><body>
                <script src="\(fx.base)/v1/paymentWidgets.js?checkoutId=\(id)"></script>
                <form action="\(back)" class="paymentWidgets" data-brands="VISA MASTER"></form>
                </body></html>
                """
            let shop = try await MerchantPageServer.start(page)
            let paying: () async throws -> Void = {
                try await HeadlessBrowser.with { browser in
                    try await browser.open(shop.url)
                    let form = try await browser.source(containing: "name=\"number\"")
                    #expect(form.contains("92.00 SAR") && form.contains("value=\"MASTER\""), "the script did not render the card form: \(form)")
                    try await browser.type("#number", "4200 0000 0000 0000")
                    try await browser.type("#holder", "A Payer")
                    try await browser.type("#expiry", "12/30")
                    try await browser.type("#cvv", "123")
                    try await browser.click("#pay")
                    _ = try await browser.source(containing: "Authenticate")
                    try await browser.click("button[value=authenticate]")
                    let landed = try await browser.url(startingWith: back + "&id=")
                    #expect(landed.hasPrefix(back + "&id=\(id)&resourcePath="), "\(landed)")
                }
            }
            do { try await paying() } catch { await shop.stop(); throw error }
            await shop.stop()
            #expect(try await fx.status(id).code == "000.100.110")
            #expect(fx.hyperpay.charges == 1)
        }
    }

    /// The script for an unknown checkout says so (a 404 with a console error), never a form.
    @Test func theWidgetScriptOfAnUnknownCheckoutIsA404() async throws {
        try await withSimulator { fx in
            let script = try await fx.request("GET", "/v1/paymentWidgets.js?checkoutId=NOSUCH", token: nil)
            #expect(script.status == 404)
            #expect(script.text.contains("console.error") && !script.text.contains("paymentWidgets\")"))
            let id = try await fx.prepare()
            let known = try await fx.request("GET", "/v1/paymentWidgets.js?checkoutId=\(id)", token: nil)
            #expect(known.status == 200 && known.text.contains("form.paymentWidgets") && known.text.contains("92.00 SAR"))
        }
    }

    @Test func theCardFormGoesThrough3DSecureAndKeepsOnlyTheMaskedCard() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare(amount: "1.23", currency: "KWD")
            let page = try await fx.request("GET", "/v1/paymentWidgets/\(id)?brands=VISA%20MASTER", token: nil)
            #expect(page.status == 200)
            #expect(page.text.contains("1.230 KWD"))
            #expect(page.text.contains("name=\"number\""))
            let challenge = try await fx.request("POST", "/v1/paymentWidgets/\(id)", form: [
                ("brand", "VISA"), ("number", "4000 0000 0000 9995"), ("holder", "A Payer"), ("expiry", "12/30"), ("cvv", "123"), ("action", "pay")], token: nil)
            #expect(challenge.status == 200)
            #expect(challenge.text.contains("3-D Secure"))
            let action = try #require(challenge.text.range(of: #"action="([^"]+)""#, options: .regularExpression)
                .map { String(challenge.text[$0].dropFirst(8).dropLast()) })
            let back = try await fx.request("POST", action, form: [("result", "authenticate")], token: nil)
            #expect(back.status == 302)
            let status = try await fx.status(id)
            #expect(status.code == "800.100.155")
            #expect(!status.text.contains("4000000000009995"))
            #expect((status.json["card"] as? [String: String])?["last4Digits"] == "9995")
            #expect(fx.hyperpay.charges == 0)
        }
    }

    @Test func failing3DSecureGivesAuthenticationFailedAndCancelGives100_396_101() async throws {
        try await withSimulator { fx in
            let first = try await fx.prepare()
            let challenge = try await fx.request("POST", "/v1/paymentWidgets/\(first)", form: [("brand", "VISA"), ("number", "4200000000000000")], token: nil)
            let action = try #require(challenge.text.range(of: #"action="([^"]+)""#, options: .regularExpression)
                .map { String(challenge.text[$0].dropFirst(8).dropLast()) })
            _ = try await fx.request("POST", action, form: [("result", "fail")], token: nil)
            #expect(try await fx.status(first).code == "100.380.401")
            let second = try await fx.prepare()
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(second)?sandbox_outcome=cancel", token: nil)
            #expect(try await fx.status(second).code == "100.396.101")
            let third = try await fx.prepare()
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(third)?sandbox_outcome=decline", token: nil)
            #expect(try await fx.status(third).code == "800.100.151")
        }
    }

    @Test func madaPaysOnlyOnTheMadaEntity() async throws {
        try await withSimulator { fx in
            let onCards = try await fx.prepare()
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(onCards)?brands=MADA&sandbox_outcome=approve", token: nil)
            #expect(try await fx.status(onCards).code == "600.200.500")
            let onMada = try await fx.prepare(entity: HyperPaySimulator.madaEntityId)
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(onMada)?brands=MADA&sandbox_outcome=approve", token: nil)
            let status = try await fx.status(onMada, entity: HyperPaySimulator.madaEntityId)
            #expect(status.code == "000.100.110")
            #expect(status.json["paymentBrand"] as? String == "MADA")
        }
    }

    /// OPPWA documents no de-duplication of CP/RF/RV, so the simulator keeps
    /// none: a replay under the same `merchantTransactionId` is a new call
    /// (here refused: only 42.00 is left). What was made is found in the
    /// transaction reports under that id.
    @Test func captureRefundAndTheirLimitsAndAReplayIsANewCallTheReportsTell() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare(type: "PA")
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            #expect(fx.hyperpay.charges == 0)
            let paymentId = try #require(try await fx.status(id).json["id"] as? String)
            let capture: [(String, String)] = [("entityId", HyperPaySimulator.entityId), ("paymentType", "CP"), ("amount", "50.00"),
                                               ("currency", "SAR"), ("merchantTransactionId", "cap-00000001")]
            let captured = try await fx.request("POST", "/v1/payments/\(paymentId)", form: capture)
            #expect(captured.status == 200)
            #expect(captured.code == "000.100.110")
            #expect(captured.json["referencedId"] as? String == paymentId)
            #expect(fx.hyperpay.charges == 1)
            let replay = try await fx.request("POST", "/v1/payments/\(paymentId)", form: capture)
            #expect(replay.status == 400 && replay.code == "700.400.100", "not a replay: a new capture of 50.00, past the 42.00 left")
            #expect(fx.hyperpay.charges == 1)
            let report = try await fx.request("GET", "/v1/query?entityId=\(HyperPaySimulator.entityId)&merchantTransactionId=cap-00000001")
            #expect(report.status == 200 && report.code == "000.000.100")
            // Both tries, oldest first: the capture, then the refused replay with its code.
            let made = report.json["payments"] as? [[String: Any]] ?? []
            #expect(made.count == 2 && made.first?["id"] as? String == captured.json["id"] as? String
                    && (made.first?["result"] as? [String: Any])?["code"] as? String == "000.100.110"
                    && (made.last?["result"] as? [String: Any])?["code"] as? String == "700.400.100", "\(report.text)")
            let none = try await fx.request("GET", "/v1/query?entityId=\(HyperPaySimulator.entityId)&merchantTransactionId=never-00000001")
            #expect(none.status == 404 && none.code == "700.400.580")
            let tooMuch = try await fx.request("POST", "/v1/payments/\(paymentId)", form: [
                ("entityId", HyperPaySimulator.entityId), ("paymentType", "CP"), ("amount", "42.01"), ("currency", "SAR")])
            #expect(tooMuch.status == 400)
            #expect(tooMuch.code == "700.400.100")
            // A refund references the capture, as on OPPWA: an RF on the PA is the wrong type.
            let onThePA = try await fx.request("POST", "/v1/payments/\(paymentId)", form: [
                ("entityId", HyperPaySimulator.entityId), ("paymentType", "RF"), ("amount", "50.00"), ("currency", "SAR")])
            #expect(onThePA.status == 400)
            #expect(onThePA.code == "700.300.100")
            #expect(fx.hyperpay.refunds(of: paymentId).count == 0)
            let captureId = try #require(captured.json["id"] as? String)
            let refund = try await fx.request("POST", "/v1/payments/\(captureId)", form: [
                ("entityId", HyperPaySimulator.entityId), ("paymentType", "RF"), ("amount", "50.00"), ("currency", "SAR")])
            #expect(refund.code == "000.100.110")
            #expect(refund.json["referencedId"] as? String == captureId)
            let overRefund = try await fx.request("POST", "/v1/payments/\(captureId)", form: [
                ("entityId", HyperPaySimulator.entityId), ("paymentType", "RF"), ("amount", "0.01"), ("currency", "SAR")])
            #expect(overRefund.code == "700.400.200")
            #expect(fx.hyperpay.refunds(of: captureId) == (1, 5000))
        }
    }

    @Test func aReversedPreAuthorizationCannotBeCaptured() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare(type: "PA")
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            let paymentId = try #require(try await fx.status(id).json["id"] as? String)
            let reversal = try await fx.request("POST", "/v1/payments/\(paymentId)", form: [("entityId", HyperPaySimulator.entityId), ("paymentType", "RV")])
            #expect(reversal.code == "000.100.110")
            #expect(reversal.json["paymentType"] as? String == "RV")
            let capture = try await fx.request("POST", "/v1/payments/\(paymentId)", form: [
                ("entityId", HyperPaySimulator.entityId), ("paymentType", "CP"), ("amount", "92.00"), ("currency", "SAR")])
            #expect(capture.code == "700.400.100")
            #expect(fx.hyperpay.charges == 0)
        }
    }

    @Test func theNotificationDecryptsWithTheWebhookKeyToThePayment() async throws {
        try await withSimulator { fx in
            let id = try await fx.prepare()
            #expect(fx.hyperpay.notification(forCheckout: id) == nil)
            _ = try await fx.request("GET", "/v1/paymentWidgets/\(id)?sandbox_outcome=approve", token: nil)
            let note = try #require(fx.hyperpay.notification(forCheckout: id))
            func bytes(_ hex: String) -> [UInt8] {
                stride(from: 0, to: hex.count, by: 2).map { i in
                    UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
                }
            }
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes(try #require(note.headers["X-Initialization-Vector"]))),
                ciphertext: bytes(String(decoding: note.body, as: UTF8.self)), tag: bytes(try #require(note.headers["X-Authentication-Tag"])))
            let plain = try AES.GCM.open(box, using: SymmetricKey(data: bytes(HyperPaySimulator.webhookKey)))
            let document = try #require(try JSONSerialization.jsonObject(with: plain) as? [String: Any])
            #expect(document["type"] as? String == "PAYMENT")
            let payload = try #require(document["payload"] as? [String: Any])
            #expect(payload["merchantTransactionId"] as? String == "att_00000001")
            #expect((payload["result"] as? [String: Any])?["code"] as? String == "000.100.110")
            let wrongKey = String(repeating: "0", count: 64)
            let forged = try #require(fx.hyperpay.notification(forCheckout: id, key: wrongKey))
            let forgedBox = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes(forged.headers["X-Initialization-Vector"]!)),
                ciphertext: bytes(String(decoding: forged.body, as: UTF8.self)), tag: bytes(forged.headers["X-Authentication-Tag"]!))
            #expect(throws: (any Error).self) { try AES.GCM.open(forgedBox, using: SymmetricKey(data: bytes(HyperPaySimulator.webhookKey))) }
        }
    }

    @Test func anInjectedServerErrorHasOPPWAsErrorShape() async throws {
        try await withSimulator { fx in
            fx.sandbox.faults.add(.init(provider: "hyperpay", path: "/v1/checkouts", fault: .status(503)))
            let answer = try await fx.request("POST", "/v1/checkouts", form: [("entityId", HyperPaySimulator.entityId)])
            #expect(answer.status == 503)
            #expect(answer.code == "900.100.100")
        }
    }
}
