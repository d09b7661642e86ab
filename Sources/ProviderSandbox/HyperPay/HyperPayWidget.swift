import Foundation
import PaymentFields
import GatewayPayloads
import Hummingbird

/// OPPWA's COPYandPAY widget. As COPYandPAY's integration guide has it, the
/// merchant's own page holds
/// `<script src="…/v1/paymentWidgets.js?checkoutId={id}"></script>` and
/// `<form action="{where the shopper returns}" class="paymentWidgets" data-brands="VISA MASTER"></form>`;
/// the script turns that form into the card form (posting to
/// `/v1/paymentWidgets/{checkoutId}`, the form's own `action` carried along),
/// then a 3-D Secure step (`/v1/threeDSecure/{id}`), then a `302` to the
/// form's `action` (or, without one, the checkout's `shopperResultUrl`)
/// with `id` and `resourcePath`, as the real widget returns the shopper.
///
/// `GET /v1/paymentWidgets/{checkoutId}?brands=VISA MASTER` is the sandbox's
/// stand-in for that merchant page (the shipped manifest's `widget_page_url`
/// in sandbox mode): the script and the form, returning to the checkout's
/// `shopperResultUrl`, and the same card form for a browser without scripts.
///
/// `?sandbox_outcome=approve|decline|cancel` on the page URL completes it at
/// once with the first brand's test card (`sandbox_code=` picks another
/// result code of ``HyperPayResultCode/payable``). The card number posted is
/// used to choose the outcome and dropped: only its BIN and last four digits
/// are kept.
struct HyperPayWidget: Sendable {
    let simulator: HyperPaySimulator
    let sandbox: SandboxContext

    /// Sandbox test cards and the result each gets.
    static let testCards: [String: (brand: String, code: String)] = [
        "4200000000000000": ("VISA", HyperPayResultCode.success),
        "5454545454545454": ("MASTER", HyperPayResultCode.success),
        "4464040000000007": ("MADA", HyperPayResultCode.success),
        "4000000000000077": ("VISA", HyperPayResultCode.review),
        "4000000000000002": ("VISA", HyperPayResultCode.invalidCard),
        "4000000000009995": ("VISA", HyperPayResultCode.amountExceedsCredit),
    ]

    /// The approving test card of each brand (masked: BIN, last four).
    static let approving: [String: (bin: String, last4: String)] = [
        "VISA": ("420000", "0000"), "MASTER": ("545454", "5454"), "MADA": ("446404", "0007"), "APPLEPAY": ("420000", "0000"),
    ]

    static let brands: Set<String> = ["VISA", "MASTER", "MADA", "APPLEPAY"]

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let widget = self
        routes.get("v1/paymentWidgets.js") { request, _ -> Response in
            widget.script(request.uri.queryParameters.get("checkoutId") ?? "")
        }
        routes.get("v1/paymentWidgets/:checkoutId") { request, context -> Response in
            widget.page(context.parameters.get("checkoutId") ?? "", query: request.uri.queryParameters)
        }
        routes.post("v1/paymentWidgets/:checkoutId") { request, context -> Response in
            widget.submit(context.parameters.get("checkoutId") ?? "", try await HyperPayWire.body(request))
        }
        routes.post("v1/threeDSecure/:challenge") { request, context -> Response in
            widget.authenticate(context.parameters.get("challenge") ?? "", try await HyperPayWire.body(request))
        }
    }

    private func checkout(_ id: String) -> HyperPayCheckout? { simulator.state.withLock { $0.checkouts[id] } }

    private func brands(_ query: String?, checkout: HyperPayCheckout) -> [String] {
        let asked = (query ?? "").split(whereSeparator: { $0 == " " || $0 == "+" || $0 == "," }).map { $0.uppercased() }.filter(Self.brands.contains)
        if !asked.isEmpty { return asked }
        return checkout.entityId == HyperPaySimulator.madaEntityId ? ["MADA"] : ["VISA", "MASTER"]
    }

    func page(_ checkoutId: String, query: Parameters) -> Response {
        guard let checkout = checkout(checkoutId) else {
            return HostedPage.response(.notFound, HyperPayPages.message("Unknown checkout", "No checkout \(checkoutId.prefix(64)) exists; prepare one with POST /v1/checkouts."))
        }
        let brands = brands(query.get("brands"), checkout: checkout)
        guard let outcome = query.get("sandbox_outcome") else {
            if let paid = simulator.payment(ofCheckout: checkoutId) { return finished(checkout, paid) }
            return HostedPage.response(.ok, HyperPayPages.merchantPage(
                checkout, brands: brands, script: base + "/v1/paymentWidgets.js?checkoutId=" + HostedPage.queryComponent(checkoutId),
                cardForm: HyperPayPages.cardFields(brands: brands), action: base + "/v1/paymentWidgets/" + HostedPage.queryComponent(checkoutId)))
        }
        var code: String
        switch outcome {
        case "approve": code = HyperPayResultCode.success
        case "decline": code = HyperPayResultCode.invalidCard
        case "cancel": code = HyperPayResultCode.cancelledByUser
        default:
            return HostedPage.response(.badRequest, HyperPayPages.message("Unknown sandbox outcome", "sandbox_outcome must be approve, decline or cancel."))
        }
        if let asked = query.get("sandbox_code") {
            guard HyperPayResultCode.payable.contains(asked) else {
                return HostedPage.response(.badRequest, HyperPayPages.message(
                    "Unknown sandbox code", "sandbox_code must be one of " + HyperPayResultCode.payable.sorted().joined(separator: ", ") + "."))
            }
            code = asked
        }
        let brand = brands[0]
        let card = Self.approving[brand] ?? ("420000", "0000")
        return finish(checkout, brand: brand, bin: card.bin, last4: card.last4, code: Self.entityCheck(brand, checkout) ?? code)
    }

    func submit(_ checkoutId: String, _ form: [String: String]) -> Response {
        // The merchant page's form `action`, carried by the script: where COPYandPAY returns the shopper.
        if let back = form["shopperResultUrl"], ["http", "https"].contains(URL(string: back)?.scheme ?? ""), URL(string: back)?.host != nil {
            simulator.state.withLock { state in
                if state.checkouts[checkoutId]?.paymentId == nil { state.checkouts[checkoutId]?.shopperResultUrl = back }
            }
        }
        guard let checkout = checkout(checkoutId) else {
            return HostedPage.response(.notFound, HyperPayPages.message("Unknown checkout", "No checkout \(checkoutId.prefix(64)) exists."))
        }
        if let paid = simulator.payment(ofCheckout: checkoutId) { return finished(checkout, paid) }
        let brand = (form["brand"] ?? "").uppercased()
        guard Self.brands.contains(brand) else {
            return HostedPage.response(.badRequest, HyperPayPages.message("Choose a brand", "brand must be one of VISA, MASTER, MADA, APPLEPAY."))
        }
        if form["action"] == "cancel" {
            return finish(checkout, brand: brand, bin: nil, last4: nil, code: HyperPayResultCode.cancelledByUser)
        }
        let card: (bin: String, last4: String, code: String)
        if brand == "APPLEPAY" {
            card = ("420000", "0000", HyperPayResultCode.success)
        } else {
            let digits = (form["number"] ?? "").filter { !$0.isWhitespace }
            guard digits.count >= 12, digits.count <= 19, digits.allSatisfy(\.isASCIIDigit), Luhn.passes(digits) else {
                return HostedPage.response(.badRequest, HyperPayPages.message(
                    "Invalid card number", "The card number must be 12 to 19 digits passing the Luhn check. Use a sandbox test card."))
            }
            card = (String(digits.prefix(6)), String(digits.suffix(4)), Self.testCards[digits]?.code ?? HyperPayResultCode.invalidCard)
        }
        let code = Self.entityCheck(brand, checkout) ?? card.code
        let challengeId = HyperPayWire.randomID()
        simulator.state.withLock {
            $0.challenges[challengeId] = HyperPayChallenge(checkoutId: checkoutId, brand: brand, bin: card.bin, last4: card.last4, code: code)
        }
        return HostedPage.response(.ok, HyperPayPages.threeDSecure(checkout, brand: brand, last4: card.last4,
                                                                 action: base + "/v1/threeDSecure/" + challengeId))
    }

    func authenticate(_ challengeId: String, _ form: [String: String]) -> Response {
        guard let challenge = simulator.state.withLock({ $0.challenges.removeValue(forKey: challengeId) }),
              let checkout = checkout(challenge.checkoutId) else {
            return HostedPage.response(.notFound, HyperPayPages.message("Unknown authentication", "This 3-D Secure step is unknown or was already answered."))
        }
        let code = form["result"] == "authenticate" ? challenge.code : HyperPayResultCode.authenticationFailed
        return finish(checkout, brand: challenge.brand, bin: challenge.bin, last4: challenge.last4, code: code)
    }

    /// `600.200.500` when the brand does not belong on the checkout's entity (mada has its own).
    static func entityCheck(_ brand: String, _ checkout: HyperPayCheckout) -> String? {
        (brand == "MADA") == (checkout.entityId == HyperPaySimulator.madaEntityId) ? nil : HyperPayResultCode.notConfiguredForBrand
    }

    /// Records the checkout's payment (once) and sends the shopper back.
    private func finish(_ checkout: HyperPayCheckout, brand: String, bin: String?, last4: String?, code: String) -> Response {
        let payment = simulator.state.withLock { state -> HyperPayTransaction in
            if let id = state.checkouts[checkout.id]?.paymentId, let paid = state.transactions[id] { return paid }
            let payment = HyperPayTransaction(
                id: HyperPayWire.randomID(), paymentType: checkout.paymentType, entityId: checkout.entityId, amount: checkout.amount,
                code: code, merchantTransactionId: checkout.merchantTransactionId, brand: brand, bin: bin, last4: last4,
                checkoutId: checkout.id, timestamp: HyperPayWire.timestamp())
            state.record(payment)
            state.checkouts[checkout.id]?.paymentId = payment.id
            if checkout.paymentType == "DB", HyperPayResultCode.moved(code) { state.charges += 1 }
            return payment
        }
        return finished(checkout, payment)
    }

    /// The way back: a 302 to `shopperResultUrl`, or a page with the result.
    private func finished(_ checkout: HyperPayCheckout, _ payment: HyperPayTransaction) -> Response {
        guard let back = checkout.shopperResultUrl else {
            return HostedPage.response(.ok, HyperPayPages.message(
                "Payment \(HyperPayResultCode.moved(payment.code) ? "completed" : "not completed")",
                "Result \(payment.code): \(HyperPayResultCode.descriptions[payment.code] ?? payment.code)."))
        }
        let resourcePath = "/v1/checkouts/\(checkout.id)/payment"
        return HostedPage.redirect(to: back, adding: ["id": checkout.id, "resourcePath": resourcePath])
    }

    private var base: String { sandbox.base(of: simulator) }

    /// `GET /v1/paymentWidgets.js?checkoutId=…`: the script that turns the
    /// page's `form.paymentWidgets` into this checkout's card form.
    func script(_ checkoutId: String) -> Response {
        let headers: HTTPFields = [.contentType: "application/javascript; charset=utf-8", .cacheControl: "no-store"]
        guard let checkout = checkout(checkoutId) else {
            let text = "console.error(" + HyperPayPages.jsString("paymentWidgets.js: no checkout \(checkoutId.prefix(64)); prepare one with POST /v1/checkouts") + ");\n"
            return Response(status: .notFound, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        let text = HyperPayPages.widgetScript(checkout, post: base + "/v1/paymentWidgets/" + HostedPage.queryComponent(checkoutId),
                                              known: Self.brands.sorted(), fallback: brands(nil, checkout: checkout))
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
