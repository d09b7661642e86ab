import Foundation
import GatewayAdapterSDK

/// authorize: a payment order, then the payer's instrument.
///
/// | method | `instrument` | what happens |
/// |---|---|---|
/// | swish | `{"device": "this"}` (default) | `app_switch` to the Swish app, back to `returnUrl` |
/// | swish | `{"device": "other", "msisdn": "070-123 45 67"}` (or `payer.phone`) | the payer approves on that phone: `pending` |
/// | visa, mastercard | `{"savedCard": "<token>"}` | the stored card pays, or `three_ds` when the issuer asks |
/// | visa, mastercard | `{"storeCard": true \| false \| "ask"}` or nothing | `redirect` to the hosted card view |
/// | applepay, googlepay | `{"paymentData": {…}}` (the wallet's token) | the token is the attempt's payload |
/// | swedbankpay | `{"menu": "all" \| "restricted" \| "instrument", "instruments": […], "instrument": "…"}` | `redirect` to the payment menu |
///
/// An instrument the payer picked from the session's `instruments` comes
/// as `selected`: a saved card's token, a known phone number, or a web
/// instrument.
extension SwedbankPayAdapter {
    /// The payer's choice, or the answer refusing it before anything is sent.
    enum Parsed: Sendable {
        case choice(Choice)
        case refused(AdapterResult)
    }

    enum Choice: Sendable {
        case swishHere
        case swishPhone(String)
        case savedCard(String)
        case newCard(store: Bool, ask: Bool)
        case wallet(method: String, payload: String)
        case menu(only: [String]?)

        var isMenuFlow: Bool {
            switch self {
            case .newCard, .menu: true
            default: false
            }
        }
    }

    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard Self.methods.contains(request.method) else {
            throw AdapterError.invalidRequest("method \(request.method.prefix(40)) is not offered by Swedbank Pay (\(Self.methods.joined(separator: ", ")))")
        }
        guard request.amount.value > 0, Self.currencies.contains(request.amount.currency) else {
            throw AdapterError.invalidRequest("Swedbank Pay takes a positive amount in SEK, NOK, DKK or EUR (got \(request.amount.currency.prefix(8)))")
        }
        if request.method == "swish" {
            guard request.amount.currency == "SEK" else { throw AdapterError.invalidRequest("Swish takes SEK only") }
            guard request.capture == .automatic else {
                throw AdapterError.invalidRequest("Swish is a sale, captured at once: it cannot be held for a manual capture")
            }
        }
        guard let back = request.returnUrl, let backURL = URL(string: back), backURL.scheme == "https" || backURL.scheme == "http", backURL.host != nil else {
            throw AdapterError.invalidRequest("returnUrl (http or https) is required: Swedbank Pay sends the payer back to it")
        }
        let choice: Choice
        switch try self.choice(request) {
        case .choice(let c): choice = c
        case .refused(let refusal): return refusal
        }

        let created: SwedbankPayAnswer
        do {
            created = try await client.create(orderBody(request, back: back, backURL: backURL, choice: choice))
        } catch let error as HTTPEgressError {
            return Self.notCreated("no answer to creating the payment order (\(error.message))")
        }
        if created.status >= 500 || created.status == 429 { return Self.notCreated("creating the payment order answered \(created.summary)") }
        guard created.ok else {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .providerError, message: "Swedbank Pay refused the payment order: \(created.summary)", retryable: false,
                safeToRetryElsewhere: true, providerCode: created.problem?.name ?? "HTTP \(created.status)"))
        }
        guard let answer = created.decode(SwedbankPayWire.OrderAnswer.self), let id = answer.paymentOrder?.id, SwedbankPayReference.isOrderID(id) else {
            // The order exists, but which one is not known: only its callback (metadata) can tell.
            throw AdapterError.outcomeUnknown("Swedbank Pay created a payment order but its answer cannot be read (\(created.summary))")
        }
        let reference = SwedbankPayReference(capture: request.capture, menu: choice.isMenuFlow, orderID: id)
        // From here on the order exists: whatever goes wrong, the answer carries its reference (pending, for verify).
        do {
            return try await pay(choice, order: answer, reference: reference, request: request, back: back)
        } catch let error as HTTPEgressError {
            return Self.lost(reference, "the payment attempt got no answer (\(error.message))")
        } catch AdapterError.invalidRequest(let message) {
            return Self.lost(reference, "an answer could not be followed (\(message))")
        } catch AdapterError.outcomeUnknown(let message), AdapterError.internal(let message) {
            return Self.lost(reference, message)
        } catch {
            return Self.lost(reference, "the payment attempt was interrupted (\(type(of: error)))")
        }
    }

    private func pay(_ choice: Choice, order: SwedbankPayWire.OrderAnswer, reference: SwedbankPayReference,
                     request: AuthorizeRequest, back: String) async throws -> AdapterResult {
        let operations = order.operations ?? []
        guard let view = operations.named("view-paymentsession") else {
            return Self.lost(reference, "the payment order offered no payment session")
        }
        let session = try await client.follow(view)
        guard session.ok, let sessionAnswer = session.decode(SwedbankPayWire.SessionAnswer.self) else {
            return Self.lost(reference, "reading the payment session answered \(session.summary)")
        }
        switch choice {
        case .menu(let only):
            if let only { _ = try await customize(sessionAnswer, ["paymentMethod": only.count == 1 ? .string(only[0]) : .null,
                                                                   "restrictToPaymentMethods": only.count > 1 ? .array(only.map { .string($0) }) : .null]) }
            return redirect(to: operations, reference: reference, amount: request.amount)
        case .newCard(_, let ask):
            _ = try await customize(sessionAnswer, ["paymentMethod": .string("CreditCard"), "restrictToPaymentMethods": .null,
                                                    "hideStoredPaymentOptions": .bool(true), "showConsentAffirmation": .bool(ask)])
            return redirect(to: operations, reference: reference, amount: request.amount)
        case .swishHere, .swishPhone, .savedCard, .wallet:
            let (method, body) = attemptBody(choice, back: back)
            guard let start = sessionAnswer.paymentSession?.methods?.first(where: { $0.paymentMethod == method })?.operations?.named("start-payment-attempt") else {
                return try await abandon(reference, problem: SwedbankPayWire.Problem(
                    type: "local/paymentmethodunavailable", title: "\(method) is not available for this payment", status: nil, detail: nil, problems: nil),
                    instrument: method, fallback: .methodUnavailable)
            }
            let started = try await client.follow(start, body)
            if let problem = started.problem, started.status < 500 {
                return try await abandon(reference, problem: problem, instrument: method)
            }
            guard started.ok, let now = started.decode(SwedbankPayWire.SessionAnswer.self) else {
                return Self.lost(reference, "starting the payment attempt answered \(started.summary)")
            }
            return try await interpret(now, reference: reference, request: request.paymentId, amount: request.amount, back: back, instrument: method)
        }
    }

    /// `customize-payment` on the session, when it offers it.
    private func customize(_ session: SwedbankPayWire.SessionAnswer, _ body: [String: JSONValue]) async throws -> SwedbankPayAnswer? {
        guard let customize = session.operations?.named("customize-payment") else { return nil }
        return try await client.follow(customize, JSONValue.object(body))
    }

    private func redirect(to operations: [SwedbankPayWire.Operation], reference: SwedbankPayReference, amount: Money) -> AdapterResult {
        guard let checkout = operations.named("redirect-checkout")?.href else {
            return Self.lost(reference, "the payment order offered no payment menu")
        }
        return AdapterResult(status: .pending, providerReference: reference.text, amount: amount,
                             action: PaymentAction(type: .redirect, url: checkout, method: "GET"), providerStatus: "Initialized")
    }

    /// The native method and the `start-payment-attempt` body of `choice`.
    private func attemptBody(_ choice: Choice, back: String) -> (String, JSONValue) {
        let client: JSONValue = .object(["userAgent": .string(userAgent), "clientType": .string("Native")])
        let culture = JSONValue.string(language)
        switch choice {
        case .swishHere: return ("Swish", .object(["culture": culture, "msisdn": .null, "client": client]))
        case .swishPhone(let msisdn): return ("Swish", .object(["culture": culture, "msisdn": .string(msisdn), "client": client]))
        case .savedCard(let token):
            return ("CreditCard", .object(["culture": culture, "paymentToken": .string(token), "client": client,
                                           "notificationUrl": .string(Self.returning(back, "3ds"))]))
        case .wallet(let method, let payload): return (method, .object(["culture": culture, "paymentPayload": .string(payload), "client": client]))
        case .newCard, .menu: return ("", .null)
        }
    }

    /// The payer's choice from the request, or the refusal of a phone number
    /// Swish cannot take (nothing is sent).
    func choice(_ request: AuthorizeRequest) throws -> Parsed {
        let instrument = request.instrument ?? [:]
        if let selected = SelectedInstrument(in: request.instrument) {
            switch (selected.kind, request.method) {
            case ("saved_card", "visa"), ("saved_card", "mastercard"): return .choice(.savedCard(Self.decodeToken(selected.reference)))
            case ("phone", "swish"): return .choice(.swishPhone(selected.reference))
            case ("web", "swedbankpay"):
                let only = selected.reference.isEmpty ? nil : selected.reference.split(separator: ",").map(String.init)
                return .choice(.menu(only: only))
            default: throw AdapterError.invalidRequest("instrument.selected (\(selected.kind.prefix(20))) is not one Swedbank Pay offered for \(request.method)")
            }
        }
        func text(_ key: String) -> String? { if case .string(let s)? = instrument[key] { s } else { nil } }
        switch request.method {
        case "swish":
            switch text("device") ?? "this" {
            case "this": return .choice(.swishHere)
            case "other":
                guard let typed = text("msisdn") ?? request.payer?.phone else {
                    return .refused(Self.phoneRefused("no mobile number was given (instrument.msisdn)"))
                }
                guard let number = SwedbankPayPhone.normalised(typed) else {
                    return .refused(Self.phoneRefused("\(SwedbankPayPhone.masked(typed.filter(\.isNumber))) is not a Swedish mobile number Swish can take"))
                }
                return .choice(.swishPhone(number))
            default: throw AdapterError.invalidRequest("instrument.device must be \"this\" or \"other\"")
            }
        case "visa", "mastercard":
            if let token = text("savedCard") {
                guard token.count <= 64, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                    throw AdapterError.invalidRequest("instrument.savedCard must be a payment token from the session's instruments")
                }
                return .choice(.savedCard(token))
            }
            switch instrument["storeCard"] {
            case nil, .bool(false)?: return .choice(.newCard(store: false, ask: false))
            case .bool(true)?: return .choice(.newCard(store: true, ask: false))
            case .string("ask")?: return .choice(.newCard(store: false, ask: true))
            default: throw AdapterError.invalidRequest("instrument.storeCard must be true, false or \"ask\"")
            }
        case "applepay", "googlepay":
            guard case .object? = instrument["paymentData"], let data = instrument["paymentData"]?.jsonBytes() else {
                throw AdapterError.invalidRequest("instrument.paymentData (the wallet's payment token, an object) is required for \(request.method)")
            }
            return .choice(.wallet(method: request.method == "applepay" ? "ApplePay" : "GooglePay", payload: String(decoding: data, as: UTF8.self)))
        default:
            switch text("menu") ?? "all" {
            case "all": return .choice(.menu(only: nil))
            case "restricted":
                guard case .array(let list)? = instrument["instruments"], !list.isEmpty else {
                    throw AdapterError.invalidRequest("instrument.instruments (a non-empty list) is required with menu \"restricted\"")
                }
                return .choice(.menu(only: list.compactMap(\.stringValue)))
            case "instrument":
                guard let one = text("instrument") else { throw AdapterError.invalidRequest("instrument.instrument is required with menu \"instrument\"") }
                return .choice(.menu(only: [one]))
            default: throw AdapterError.invalidRequest("instrument.menu must be all, restricted or instrument")
            }
        }
    }

    static func phoneRefused(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(
            code: .invalidPhoneNumber, message: "Swish: \(why); nothing was sent", retryable: true, safeToRetryElsewhere: false,
            field: "instrument.msisdn"))
    }

    private func orderBody(_ request: AuthorizeRequest, back: String, backURL: URL, choice: Choice) -> SwedbankPayWire.Create {
        let origin = "\(backURL.scheme!)://\(backURL.host!)" + (backURL.port.map { ":\($0)" } ?? "")
        let order = String(request.orderId.prefix(50))
        var store = false
        if case .newCard(let s, _) = choice { store = s }
        return SwedbankPayWire.Create(paymentorder: SwedbankPayWire.PaymentOrder(
            currency: request.amount.currency, amount: request.amount.value, description: String("Order \(order)".prefix(40)), userAgent: userAgent,
            language: language, generatePaymentToken: store,
            urls: SwedbankPayWire.URLs(hostUrls: [origin], completeUrl: Self.returning(back, "complete"), cancelUrl: Self.returning(back, "cancel"),
                                       callbackUrl: callbackURL, termsOfServiceUrl: termsURL),
            payeeInfo: SwedbankPayWire.PayeeInfo(payeeId: payeeID, payeeReference: Self.payeeReference(request.paymentId), payeeName: payeeName,
                                                 orderReference: order),
            payer: request.payer?.reference.map { SwedbankPayWire.Payer(payerReference: $0) },
            orderItems: [SwedbankPayWire.OrderItem(reference: order, name: "Order \(order)", unitPrice: request.amount.value, amount: request.amount.value)],
            metadata: ["gatewayPaymentId": request.paymentId, "gatewayCapture": request.capture.rawValue,
                       "gatewayFlow": choice.isMenuFlow ? "menu" : "native"]))
    }

    /// The payment id as a `payeeReference`: letters and digits, at most 30.
    static func payeeReference(_ paymentId: String) -> String {
        String(paymentId.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(30))
    }

    /// `back` with `sbp_return=<what>`: which return the payer made.
    static func returning(_ back: String, _ what: String) -> String {
        back + (back.contains("?") ? "&" : "?") + "sbp_return=" + what
    }

    static func notCreated(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(
            code: .providerError, message: "Swedbank Pay: \(why); no payment order reached the payer, so nothing was charged",
            retryable: true, safeToRetryElsewhere: true))
    }

    /// The order exists but its state is not known: pending, for verify.
    static func lost(_ reference: SwedbankPayReference, _ why: String) -> AdapterResult {
        AdapterResult(status: .pending, providerReference: reference.text, problem: AdapterProblem(
            code: .networkError, message: "Swedbank Pay: \(why); the payment order is verified", retryable: true))
    }
}
