import Foundation
import Hummingbird

/// The native payment session of a payment order (`view-paymentsession`):
/// `GET /psp/paymentsessions/{token}` gives the payer's methods (with their
/// prefills: the Swish number, the saved cards) and the operations allowed
/// now; the session's operations start an attempt per method, complete a
/// 3-D Secure authentication, customize the web menu, and acknowledge a
/// failed attempt. The session's shapes follow Swedbank's mobile SDKs; the
/// paths of its operations are the simulator's own (clients follow hrefs).
struct SwedbankPaySessionAPI: Sendable {
    let simulator: SwedbankPaySimulator
    let base: @Sendable () -> String

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.get("psp/paymentsessions/:token") { request, context in
            try await api.guarded(request) { try api.session(context.parameters.get("token") ?? "") }
        }
        routes.post("psp/paymentsessions/:token/methods/:method/attempts") { request, context in
            try await api.guarded(request) {
                try api.start(context.parameters.get("token") ?? "", method: context.parameters.get("method") ?? "", try await SwedbankPayWire.body(request))
            }
        }
        routes.post("psp/paymentsessions/:token/authentications") { request, context in
            try await api.guarded(request) { try api.completeAuthentication(context.parameters.get("token") ?? "", try await SwedbankPayWire.body(request)) }
        }
        routes.post("psp/paymentsessions/:token/customize") { request, context in
            try await api.guarded(request) { try api.customize(context.parameters.get("token") ?? "", try await SwedbankPayWire.body(request)) }
        }
        routes.post("psp/paymentsessions/:token/acknowledge") { request, context in
            try await api.guarded(request) { try api.acknowledge(context.parameters.get("token") ?? "") }
        }
    }

    /// The session API answers a merchant's token (server side) and a device
    /// (no token) alike: the session token in the path is the credential.
    func guarded(_ request: Request, _ body: () async throws -> Response) async throws -> Response {
        simulator.received(request)
        do { return try await body() } catch let refusal as SwedbankPayWire.Refusal { return refusal.response }
    }

    func order(ofToken token: String) throws -> SwedbankPayOrder {
        guard let order = simulator.state.withLock({ state in state.orderOfToken[token].flatMap { state.orders[$0] } }) else {
            throw SwedbankPayWire.Refusal.notFound("No payment session \(token.prefix(64))")
        }
        return order
    }

    func session(_ token: String) throws -> Response {
        SwedbankPayWire.answer(.ok, document(try order(ofToken: token)))
    }

    /// `{"paymentSession": {…}, "operations": […], "problem"?: {…}}`.
    func document(_ order: SwedbankPayOrder) -> [String: Any] {
        let api = simulator.apiBase(base()) + "/psp/paymentsessions/" + order.token
        let cards = order.payerReference.map { payer in simulator.state.withLock { $0.cards(of: payer) } } ?? []
        func start(_ method: String) -> [[String: Any]] {
            [SwedbankPayWire.operation("start-payment-attempt", api + "/methods/\(method)/attempts", method: "POST")]
        }
        var swish: [String: Any] = ["paymentMethod": "Swish", "operations": start("Swish")]
        if order.payerReference != nil { swish["prefills"] = [["rank": 1, "msisdn": SwedbankPaySimulator.prefillMSISDN]] }
        let card: [String: Any] = [
            "paymentMethod": "CreditCard", "cardBrands": ["Visa", "MasterCard"], "operations": start("CreditCard"),
            "prefills": cards.enumerated().map { index, c in
                ["rank": index + 1, "paymentToken": c.token, "cardBrand": c.brand, "maskedPan": c.maskedPan, "expiryDate": c.expiry] as [String: Any]
            },
        ]
        let methods: [[String: Any]] = [
            swish, card,
            ["paymentMethod": "ApplePay", "operations": start("ApplePay")],
            ["paymentMethod": "GooglePay", "operations": start("GooglePay")],
            ["paymentMethod": "Invoice-PayExFinancingSe"],
        ]
        var urls: [String: Any] = ["completeUrl": order.urls.completeUrl, "hostUrls": order.urls.hostUrls]
        urls["cancelUrl"] = order.urls.cancelUrl ?? NSNull()
        var session: [String: Any] = ["culture": order.language, "methods": methods, "urls": urls,
                                      "settings": ["enabledPaymentMethods": SwedbankPaySimulator.instruments]]
        session["instrumentModePaymentMethod"] = NSNull()
        var document: [String: Any] = ["paymentSession": session, "operations": operations(of: order, api: api)]
        if let problem = order.problem {
            document["problem"] = ["type": problem.type, "title": problem.title, "status": problem.status, "detail": problem.detail,
                                   "operation": "start-payment-attempt"]
        }
        return document
    }

    func operations(of order: SwedbankPayOrder, api: String) -> [[String: Any]] {
        let pages = base() + "/ecom"
        switch order.status {
        case "Paid": return [SwedbankPayWire.operation("redirect-payer", order.urls.completeUrl, contentType: "text/html")]
        case "Initialized": break
        default: return [SwedbankPayWire.operation("redirect-payer", order.urls.cancelUrl ?? order.urls.completeUrl, contentType: "text/html")]
        }
        if order.problem != nil { return [SwedbankPayWire.operation("acknowledge-failed-attempt", api + "/acknowledge", method: "POST")] }
        guard let attempt = order.attempt else {
            return [SwedbankPayWire.operation("customize-payment", api + "/customize", method: "POST"),
                    SwedbankPayWire.operation("abort-payment", simulator.apiBase(base()) + order.path, method: "PATCH")]
        }
        var getPayment = SwedbankPayWire.operation("get-payment", api)
        switch attempt.stage {
        case .launchApp:
            getPayment["tasks"] = [["rel": "launch-client-app", "href": pages + "/swish/" + order.token, "method": "GET", "contentType": "text/html"]]
            return [getPayment]
        case .awaitingPhone:
            return [getPayment]
        case .challenge(let creq, _):
            var complete = SwedbankPayWire.operation("complete-authentication", api + "/authentications", method: "POST")
            complete["tasks"] = [["rel": "sca-redirect", "href": pages + "/acs/" + order.token, "method": "POST",
                                  "contentType": "application/x-www-form-urlencoded",
                                  "expects": [["name": "creq", "type": "string", "value": creq]]]]
            return [complete]
        }
    }

    /// `start-payment-attempt` for `method`.
    func start(_ token: String, method: String, _ body: [String: Any]) throws -> Response {
        let order = try order(ofToken: token)
        guard order.status == "Initialized", order.problem == nil, order.attempt == nil else {
            throw SwedbankPayWire.Refusal.notAllowed("A payment attempt cannot start now (order \(order.status))")
        }
        switch method {
        case "Swish":
            guard order.currency == "SEK" else { throw SwedbankPayWire.Refusal.input("currency", "Swish takes SEK only") }
            let msisdn = body["msisdn"] as? String
            if let msisdn {
                guard msisdn.range(of: #"^\+467[0-9]{8}$"#, options: .regularExpression) != nil, !msisdn.hasSuffix("0099") else {
                    throw SwedbankPayWire.Refusal.input("Msisdn", "The msisdn is not valid or not enrolled in Swish")
                }
            }
            setAttempt(token, .init(method: "Swish", stage: msisdn == nil ? .launchApp : .awaitingPhone, msisdn: msisdn))
        case "CreditCard":
            guard let paymentToken = body["paymentToken"] as? String else {
                throw SwedbankPayWire.Refusal.input("paymentToken", "A paymentToken is required for a stored card; a new card is entered on the payment menu")
            }
            guard let card = simulator.state.withLock({ $0.card(paymentToken, of: order.payerReference) }) else {
                throw SwedbankPayWire.Refusal.input("paymentToken", "The paymentToken is unknown for this payer")
            }
            if card.behaviour == .inactive {
                simulator.fail(token, instrument: "CreditCard", problem: "paymenttokeninactive")
            } else if let problem = SwedbankPaySimulator.acquirerProblem(amount: order.amount) {
                simulator.fail(token, instrument: "CreditCard", problem: problem)
            } else if card.behaviour == .challenge {
                guard let notification = body["notificationUrl"] as? String, URL(string: notification)?.scheme != nil else {
                    throw SwedbankPayWire.Refusal.input("notificationUrl", "A notificationUrl is required: the issuer asks for 3-D Secure")
                }
                setAttempt(token, .init(method: "CreditCard", stage: .challenge(creq: SimulatorJSON.uuid(), notificationUrl: notification), card: card))
            } else {
                simulator.pay(token, instrument: "CreditCard", card: card)
            }
        case "ApplePay", "GooglePay":
            guard let payload = body["paymentPayload"] as? String, !payload.isEmpty,
                  (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) != nil else {
                throw SwedbankPayWire.Refusal.input("paymentPayload", "The wallet's payment token, as JSON text, is required")
            }
            if let problem = SwedbankPaySimulator.acquirerProblem(amount: order.amount) {
                simulator.fail(token, instrument: method, problem: problem)
            } else {
                let device = SwedbankPaySavedCard(token: "", brand: "Visa", bin: "411111", last4: "1111", expiry: "12/2030", behaviour: .frictionless)
                simulator.pay(token, instrument: method, card: device)
            }
        default:
            throw SwedbankPayWire.Refusal.input("paymentMethod", "\(method.prefix(40)) is paid on the payment menu, not by a native attempt")
        }
        return try session(token)
    }

    private func setAttempt(_ token: String, _ attempt: SwedbankPayOrder.Attempt) {
        simulator.state.withLock { state in
            guard let id = state.orderOfToken[token] else { return }
            state.orders[id]?.attempt = attempt
        }
    }

    /// `complete-authentication {cRes}`: the ACS's answer decides.
    func completeAuthentication(_ token: String, _ body: [String: Any]) throws -> Response {
        let order = try order(ofToken: token)
        guard case .challenge(let creq, _)? = order.attempt?.stage, let card = order.attempt?.card else {
            throw SwedbankPayWire.Refusal.notAllowed("No 3-D Secure authentication is waiting")
        }
        try Self.settle(simulator, token: token, creq: creq, card: card, cres: body["cRes"] as? String)
        return try session(token)
    }

    /// Pays or fails a challenged card by the ACS's `cres` (`<creq>.Y` or `<creq>.N`).
    static func settle(_ simulator: SwedbankPaySimulator, token: String, creq: String, card: SwedbankPaySavedCard, cres: String?,
                       storeCard: Bool = false) throws {
        switch cres {
        case creq + ".Y": simulator.pay(token, instrument: "CreditCard", card: card, storeCard: storeCard)
        case creq + ".N": simulator.fail(token, instrument: "CreditCard", problem: "3dsecuredeclined")
        default: throw SwedbankPayWire.Refusal.input("cRes", "The cRes does not answer this authentication")
        }
    }

    /// `customize-payment {paymentMethod, restrictToPaymentMethods, showConsentAffirmation}`: what the web menu offers.
    func customize(_ token: String, _ body: [String: Any]) throws -> Response {
        _ = try order(ofToken: token)
        var methods: [String]?
        if let one = body["paymentMethod"] as? String { methods = [one] }
        if let some = body["restrictToPaymentMethods"] as? [String] { methods = some }
        if let methods, methods.isEmpty || !methods.allSatisfy(SwedbankPaySimulator.instruments.contains) {
            throw SwedbankPayWire.Refusal.input("restrictToPaymentMethods", "Unknown payment method; known: \(SwedbankPaySimulator.instruments.joined(separator: ", "))")
        }
        let consent = body["showConsentAffirmation"] as? Bool ?? false
        simulator.state.withLock { state in
            guard let id = state.orderOfToken[token] else { return }
            state.orders[id]?.menuMethods = methods
            state.orders[id]?.showConsent = consent
        }
        return try session(token)
    }

    func acknowledge(_ token: String) throws -> Response {
        _ = try order(ofToken: token)
        simulator.state.withLock { state in
            guard let id = state.orderOfToken[token] else { return }
            state.orders[id]?.problem = nil
        }
        return try session(token)
    }
}
