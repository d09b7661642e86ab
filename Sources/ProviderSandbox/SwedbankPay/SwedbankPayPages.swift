import Foundation
import PaymentFields
import Hummingbird

/// The payer's pages, server-rendered with stable ids, every step a form
/// POST answered by a 302 (no script), so that curl and a headless browser
/// both finish them:
///
/// - `GET /ecom/checkout/{token}` (`redirect-checkout`): the payment menu,
///   listing the instruments the order's customization allows (`#method-CreditCard`,
///   `#method-Swish`, …), and the last attempt's problem if any;
/// - `GET|POST /ecom/checkout/{token}/card`: the hosted card view
///   (`#card-number`, `#expiry`, `#cvc`, `#consent` when the merchant asked
///   the payer's consent to store the card, `#pay`); it keeps the BIN and the
///   last four digits only;
/// - `GET|POST /ecom/acs/{token}`: the issuer's 3-D Secure page
///   (`#acs-approve`, `#acs-decline`); in the native flow it posts the payer
///   back to the merchant's `notificationUrl` with `cres`, in the menu flow
///   it finishes the payment itself;
/// - `GET|POST /ecom/swish/{token}`: the stand-in for the Swish app (a
///   browser cannot open `swish://`): pay, decline, cancel, or "the app did
///   not open"; then back to `callbackurl` (the merchant's return), or to the
///   order's `completeUrl`.
///
/// `?sandbox_outcome=` on the ACS and Swish pages completes them at once.
struct SwedbankPayPages: Sendable {
    let simulator: SwedbankPaySimulator
    let base: @Sendable () -> String

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let pages = self
        routes.get("ecom/checkout/:token") { _, context in pages.menu(context.parameters.get("token") ?? "") }
        routes.post("ecom/checkout/:token/method") { request, context in
            pages.chooseMethod(context.parameters.get("token") ?? "", try await HostedPage.form(request))
        }
        routes.get("ecom/checkout/:token/card") { _, context in pages.cardForm(context.parameters.get("token") ?? "", error: nil) }
        routes.post("ecom/checkout/:token/card") { request, context in
            pages.payByCard(context.parameters.get("token") ?? "", try await HostedPage.form(request))
        }
        routes.get("ecom/acs/:token") { request, context in
            let token = context.parameters.get("token") ?? ""
            if let outcome = request.uri.queryParameters.get("sandbox_outcome") { return pages.authenticate(token, outcome: String(outcome)) }
            return pages.acs(token)
        }
        routes.post("ecom/acs/:token") { request, context in
            let token = context.parameters.get("token") ?? ""
            let form = try await HostedPage.form(request)
            guard let outcome = form["outcome"] else { return pages.acs(token) }
            return pages.authenticate(token, outcome: outcome)
        }
        // The payer's other phone, by the order (what a script knows from the attempt's reference).
        routes.get("ecom/phone/:order") { request, context in
            let order = context.parameters.get("order") ?? ""
            guard let token = pages.simulator.token(ofOrder: order) else { return pages.unknown(order) }
            let query = request.uri.query.map { "?" + $0 } ?? ""
            return Response(status: .found, headers: [.location: pages.base() + "/ecom/swish/" + token + query])
        }
        routes.get("ecom/swish/:token") { request, context in
            let token = context.parameters.get("token") ?? ""
            let back: String? = request.uri.queryParameters.get("callbackurl").map { String($0) }
            if let outcome = request.uri.queryParameters.get("sandbox_outcome") { return pages.swish(token, outcome: String(outcome), back: back) }
            return pages.swishApp(token, back: back)
        }
        routes.post("ecom/swish/:token") { request, context in
            let form = try await HostedPage.form(request)
            return pages.swish(context.parameters.get("token") ?? "", outcome: form["outcome"] ?? "", back: form["callbackurl"])
        }
    }

    static func page(_ title: String, _ body: String) -> Response {
        HostedPage.response(.ok, HostedPage.layout(title, body, provider: "Swedbank Pay"))
    }

    func order(_ token: String) -> SwedbankPayOrder? {
        simulator.state.withLock { state in state.orderOfToken[token].flatMap { state.orders[$0] } }
    }

    func unknown(_ token: String) -> Response {
        HostedPage.response(.notFound, HostedPage.layout("Unknown payment", "<p>No payment \(HostedPage.escape(String(token.prefix(64)))) exists.</p>",
                                                         provider: "Swedbank Pay"))
    }

    static func amount(_ order: SwedbankPayOrder) -> String {
        let exponent = order.currency == "JPY" ? 0 : 2
        let major = order.amount / Int64(pow(10.0, Double(exponent)))
        let minor = order.amount % Int64(pow(10.0, Double(exponent)))
        return exponent == 0 ? "\(major) \(order.currency)" : String(format: "%lld.%02lld %@", major, minor, order.currency)
    }

    // MARK: The payment menu

    func menu(_ token: String) -> Response {
        guard let order = order(token) else { return unknown(token) }
        guard order.status == "Initialized" else {
            return Self.page("Payment \(order.status.lowercased())", "<p id=\"status\">This payment is \(HostedPage.escape(order.status)).</p>")
        }
        let methods = order.menuMethods ?? SwedbankPaySimulator.instruments
        var body = "<p class=\"amount\">\(HostedPage.escape(Self.amount(order)))</p><p>\(HostedPage.escape(order.description))</p>"
        if let problem = order.problem {
            body += "<p id=\"problem\" role=\"alert\">\(HostedPage.escape(problem.title)). Please try again or choose another way to pay.</p>"
        }
        for method in methods {
            switch method {
            case "CreditCard":
                body += "<p><a id=\"method-CreditCard\" href=\"\(HostedPage.escape(token))/card\">Card</a></p>"
            case "Swish":
                body += """
                    <form method="post" action="\(HostedPage.escape(token))/method"><input type="hidden" name="method" value="Swish">
                    <label>Mobile number <input id="msisdn" name="msisdn" value="\(SwedbankPaySimulator.prefillMSISDN)"></label>
                    <button id="method-Swish" type="submit">Swish</button></form>
                    """
            default:
                body += """
                    <form method="post" action="\(HostedPage.escape(token))/method"><input type="hidden" name="method" value="\(HostedPage.escape(method))">
                    <button id="method-\(HostedPage.escape(method))" type="submit">\(HostedPage.escape(method))</button></form>
                    """
            }
        }
        return Self.page("Pay with Swedbank Pay", body)
    }

    /// A non-card choice on the menu: Swish goes to the phone's app; a wallet or invoice pays at once.
    func chooseMethod(_ token: String, _ form: [String: String]) -> Response {
        guard var order = order(token) else { return unknown(token) }
        let method = form["method"] ?? ""
        guard order.status == "Initialized", (order.menuMethods ?? SwedbankPaySimulator.instruments).contains(method) else {
            return HostedPage.response(.badRequest, HostedPage.layout("Not offered", "<p>This payment method is not offered here.</p>", provider: "Swedbank Pay"))
        }
        clearProblem(token)
        if method == "Swish" {
            let msisdn = (form["msisdn"] ?? "").filter { !$0.isWhitespace }
            guard msisdn.range(of: #"^\+467[0-9]{8}$"#, options: .regularExpression) != nil, !msisdn.hasSuffix("0099") else {
                simulator.fail(token, instrument: "Swish", problem: "inputerror")
                return HostedPage.redirect(to: base() + "/ecom/checkout/" + token, adding: [:])
            }
            order.attempt = .init(method: "Swish", stage: .awaitingPhone, msisdn: msisdn)
            simulator.state.withLock { $0.orders[order.id]?.attempt = order.attempt }
            return HostedPage.redirect(to: base() + "/ecom/swish/" + token, adding: ["callbackurl": order.urls.completeUrl])
        }
        simulator.pay(token, instrument: method, card: nil)
        return HostedPage.redirect(to: order.urls.completeUrl, adding: [:])
    }

    private func clearProblem(_ token: String) {
        simulator.state.withLock { state in
            guard let id = state.orderOfToken[token] else { return }
            state.orders[id]?.problem = nil
        }
    }

    // MARK: The hosted card view

    func cardForm(_ token: String, error: String?) -> Response {
        guard let order = order(token) else { return unknown(token) }
        guard order.status == "Initialized", (order.menuMethods ?? SwedbankPaySimulator.instruments).contains("CreditCard") else { return menu(token) }
        let consent = order.showConsent
            ? "<label><input id=\"consent\" type=\"checkbox\" name=\"consent\" value=\"yes\"> Save my card for future purchases</label>" : ""
        return Self.page("Pay by card", """
            <p class="amount">\(HostedPage.escape(Self.amount(order)))</p>
            \(error.map { "<p id=\"problem\" role=\"alert\">\(HostedPage.escape($0))</p>" } ?? "")
            <form method="post" action="card">
            <label>Card number <input id="card-number" name="number"></label>
            <label>Expiry (MM/YY) <input id="expiry" name="expiry"></label>
            <label>CVC <input id="cvc" name="cvc"></label>
            \(consent)
            <button id="pay" type="submit">Pay \(HostedPage.escape(Self.amount(order)))</button>
            </form>
            """)
    }

    /// The card view's form: the number is read for its BIN, last four and
    /// Luhn check, then dropped.
    func payByCard(_ token: String, _ form: [String: String]) -> Response {
        guard let order = order(token) else { return unknown(token) }
        guard order.status == "Initialized" else { return menu(token) }
        let digits = (form["number"] ?? "").filter(\.isNumber)
        guard (13...19).contains(digits.count), Luhn.passes(digits) else { return cardForm(token, error: "The card number is not valid.") }
        guard let expiry = form["expiry"], expiry.range(of: #"^(0[1-9]|1[0-2])/[0-9]{2}$"#, options: .regularExpression) != nil else {
            return cardForm(token, error: "The expiry date must be MM/YY.")
        }
        guard (form["cvc"] ?? "").range(of: "^[0-9]{3,4}$", options: .regularExpression) != nil else { return cardForm(token, error: "The CVC must be 3 or 4 digits.") }
        let brand = digits.hasPrefix("4") ? "Visa" : "MasterCard"
        let card = SwedbankPaySavedCard(token: "", brand: brand, bin: String(digits.prefix(6)), last4: String(digits.suffix(4)),
                                        expiry: String(expiry.prefix(2)) + "/20" + String(expiry.suffix(2)), behaviour: .frictionless)
        let store = form["consent"] == "yes"
        clearProblem(token)
        if let problem = SwedbankPaySimulator.acquirerProblem(amount: order.amount) {
            simulator.fail(token, instrument: "CreditCard", problem: problem)
            return HostedPage.redirect(to: base() + "/ecom/checkout/" + token, adding: [:])
        }
        if digits == "4761739001010416" || digits == "5226612199533406" {
            let attempt = SwedbankPayOrder.Attempt(method: "CreditCard", stage: .challenge(creq: SimulatorJSON.uuid(), notificationUrl: Self.menuFlow),
                                                   card: card, storeCard: store)
            simulator.state.withLock { $0.orders[order.id]?.attempt = attempt }
            return HostedPage.redirect(to: base() + "/ecom/acs/" + token, adding: [:])
        }
        simulator.pay(token, instrument: "CreditCard", card: card, storeCard: store)
        return HostedPage.redirect(to: order.urls.completeUrl, adding: [:])
    }

    /// A challenge raised on the hosted card view: the ACS finishes it itself.
    static let menuFlow = "menu"

    // MARK: 3-D Secure

    func acs(_ token: String) -> Response {
        guard let order = order(token), case .challenge? = order.attempt?.stage else {
            return HostedPage.response(.notFound, HostedPage.layout("No authentication", "<p>No 3-D Secure authentication is waiting.</p>", provider: "Your bank"))
        }
        return HostedPage.response(.ok, HostedPage.layout("Confirm your payment", """
            <p class="amount">\(HostedPage.escape(Self.amount(order)))</p>
            <p>Card ending \(HostedPage.escape(order.attempt?.card?.last4 ?? ""))</p>
            <form method="post" action="\(HostedPage.escape(token))">
            <button id="acs-approve" type="submit" name="outcome" value="approve">Approve</button>
            <button id="acs-decline" type="submit" name="outcome" value="decline">Decline</button>
            </form>
            """, provider: "Issuer (Swedbank Pay)"))
    }

    func authenticate(_ token: String, outcome: String) -> Response {
        guard let order = order(token), let attempt = order.attempt, case .challenge(let creq, let notification) = attempt.stage, let card = attempt.card else {
            return acs(token)
        }
        guard outcome == "approve" || outcome == "decline" else {
            return HostedPage.response(.badRequest, HostedPage.layout("Unknown outcome", "<p>The outcome must be approve or decline.</p>", provider: "Your bank"))
        }
        let cres = creq + (outcome == "approve" ? ".Y" : ".N")
        guard notification == Self.menuFlow else { return HostedPage.redirect(to: notification, adding: ["cres": cres]) }
        try? SwedbankPaySessionAPI.settle(simulator, token: token, creq: creq, card: card, cres: cres, storeCard: attempt.storeCard)
        return outcome == "approve"
            ? HostedPage.redirect(to: order.urls.completeUrl, adding: [:])
            : HostedPage.redirect(to: base() + "/ecom/checkout/" + token, adding: [:])
    }

    // MARK: Swish

    func swishApp(_ token: String, back: String?) -> Response {
        guard let order = order(token), order.attempt?.method == "Swish" else {
            return HostedPage.response(.notFound, HostedPage.layout("No Swish payment", "<p>No Swish payment is waiting.</p>", provider: "Swish"))
        }
        let hidden = back.map { "<input type=\"hidden\" name=\"callbackurl\" value=\"\(HostedPage.escape($0))\">" } ?? ""
        return HostedPage.response(.ok, HostedPage.layout("Swish", """
            <p class="amount">\(HostedPage.escape(Self.amount(order)))</p>
            <p>To \(HostedPage.escape(order.description))</p>
            <form method="post" action="\(HostedPage.escape(token))">\(hidden)
            <button id="swish-pay" type="submit" name="outcome" value="approve">Pay with BankID</button>
            <button id="swish-decline" type="submit" name="outcome" value="decline">Decline (simulate Swish refusing)</button>
            <button id="swish-cancel" type="submit" name="outcome" value="cancel">Cancel</button>
            <button id="swish-noapp" type="submit" name="outcome" value="noapp">The app did not open</button>
            </form>
            """, provider: "Swish (Swedbank Pay)"))
    }

    func swish(_ token: String, outcome: String, back: String?) -> Response {
        guard let order = order(token), order.attempt?.method == "Swish" else { return swishApp(token, back: back) }
        switch outcome {
        case "approve":
            if order.description.contains("RF07") { simulator.fail(token, instrument: "Swish", problem: "swishdeclined") }
            else if order.description.contains("TM01") { simulator.fail(token, instrument: "Swish", problem: "swishtimeout") }
            else if order.description.contains("BANKIDCL") { simulator.fail(token, instrument: "Swish", problem: "bankidcancelled") }
            else { simulator.pay(token, instrument: "Swish", card: nil) }
        case "decline": simulator.fail(token, instrument: "Swish", problem: "swishdeclined")
        case "cancel": simulator.fail(token, instrument: "Swish", problem: "usercancelled")
        case "noapp": simulator.fail(token, instrument: "Swish", problem: "clientapplaunchfailed")
        default:
            return HostedPage.response(.badRequest, HostedPage.layout("Unknown outcome", "<p>The outcome must be approve, decline, cancel or noapp.</p>", provider: "Swish"))
        }
        return HostedPage.redirect(to: back ?? order.urls.completeUrl, adding: [:])
    }
}
