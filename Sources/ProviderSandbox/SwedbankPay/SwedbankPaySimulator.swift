import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for Swedbank Pay Checkout v3: payment orders and their
/// post-purchase operations (``SwedbankPayOrdersAPI``), the native payment
/// session (``SwedbankPaySessionAPI``), and the payer's pages: the payment
/// menu and hosted card view, a 3-D Secure page and the Swish hand-off
/// (``SwedbankPayPages``).
///
/// API under `/swedbankpay/psp/…` (`api.payex.com`), pages under
/// `/swedbankpay/ecom/…` (`ecom.payex.com`). Every answer lists the
/// `operations[]` the order or session allows now, by `rel`; a client
/// follows their `href`s.
///
/// Test data (Swedbank's documented triggers, and a few of ours):
/// - amounts `900361` (insufficient funds), `900334` (fraud), `900354`
///   (expired card) and `952400` (do not retry) fail a card payment;
/// - cards `4761739001010416` and `5226612199533406` ask for 3-D Secure,
///   `4925000000000004` does not;
/// - a Swish order whose description holds `RF07` is declined, `TM01`
///   times out, `BANKIDCL` is cancelled in BankID; an MSISDN ending `0099`
///   is not enrolled in Swish (ours);
/// - each payer reference gets three saved cards: a frictionless Visa
///   (`0004`), a Visa whose issuer asks for 3-D Secure (`0416`) and a
///   Mastercard whose token is inactive (`3406`), and the Swish prefill
///   `+46739000001`.
///
/// A charge is a Swish sale or a capture; an authorization alone is not.
public final class SwedbankPaySimulator: ProviderSimulator {
    public let id = "swedbankpay"

    /// The merchant's access token (`Authorization: Bearer`) the simulator accepts.
    public static let accessToken = "swedbankpay-sandbox-access-token-4f1c9e7a2b"
    /// The instruments a payment order offers.
    static let instruments = ["CreditCard", "Swish", "ApplePay", "GooglePay", "Invoice-PayExFinancingSe"]
    /// The MSISDN Swish knows for every payer (the session's prefill).
    public static let prefillMSISDN = "+46739000001"

    let state = Mutex(SwedbankPayState())

    public init() {}

    public var charges: Int { state.withLock { $0.charges } }

    public var sandboxSecrets: [String: String] { ["access_token": Self.accessToken] }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        let base: @Sendable () -> String = { [unowned self] in sandbox.base(of: self) }
        SwedbankPayOrdersAPI(simulator: self, base: base).register(on: routes)
        SwedbankPaySessionAPI(simulator: self, base: base).register(on: routes)
        SwedbankPayPages(simulator: self, base: base).register(on: routes)
    }

    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        let (name, title) = switch status {
        case 401: ("unauthorized", "Unauthorized")
        case 403: ("forbidden", "Forbidden")
        case 404: ("notfound", "Not Found")
        case 409: ("conflict", "Conflict")
        case 500...599: ("systemerror", "Internal Server Error")
        default: ("inputerror", "Error in input data")
        }
        let document: [String: Any] = ["type": SwedbankPayWire.problemBase + name, "title": title, "status": status,
                                       "detail": "The request could not be processed", "instance": "https://api.payex.com/psp/" + SimulatorJSON.uuid()]
        return ("application/problem+json", SimulatorJSON.text(document))
    }

    // MARK: For tests

    /// Where the API `href`s of answers point instead of this simulator
    /// (`http://localhost:PORT/swedbankpay`: the same server on another
    /// origin), to prove an adapter never follows an `href` off its
    /// `base_url`; nil (the default) for the simulator's own base.
    public var apiHrefBase: String? {
        get { state.withLock { $0.apiHrefBase } }
        set { state.withLock { $0.apiHrefBase = newValue } }
    }

    /// The authority (`Host`) of every API request received, oldest first.
    public var apiHosts: [String] { state.withLock { $0.apiHosts } }

    func received(_ request: Request) {
        let authority = request.head.authority ?? ""
        state.withLock { $0.apiHosts.append(authority) }
    }

    func apiBase(_ own: String) -> String { state.withLock { $0.apiHrefBase } ?? own }

    /// The status of order `id` (its uuid or its `/psp/paymentorders/…` path).
    public func status(ofOrder id: String) -> String? {
        state.withLock { $0.orders[Self.uuid(of: id)]?.status }
    }

    /// Order `id`'s session token: its pages are `/swedbankpay/ecom/{checkout,swish,acs}/<token>`.
    public func token(ofOrder id: String) -> String? {
        state.withLock { $0.orders[Self.uuid(of: id)]?.token }
    }

    /// The uuid of the order created last, if any.
    public var lastOrderID: String? {
        state.withLock { $0.orders.values.max(by: { $0.createdAt < $1.createdAt })?.id }
    }

    /// Order `id`'s labels as created: `payeeReference`, `orderReference`, `description`.
    public func labels(ofOrder id: String) -> (payeeReference: String, orderReference: String?, description: String)? {
        state.withLock { $0.orders[Self.uuid(of: id)].map { ($0.payeeReference, $0.orderReference, $0.description) } }
    }

    /// How many orders were created.
    public var orderCount: Int { state.withLock { $0.orders.count } }

    /// The MSISDN of order `id`'s Swish attempt, as Swish received it.
    public func msisdn(ofOrder id: String) -> String? {
        state.withLock { $0.orders[Self.uuid(of: id)]?.attempt?.msisdn }
    }

    /// The restriction order `id`'s menu shows (nil: every instrument), and whether it asks consent to store a card.
    public func menu(ofOrder id: String) -> (methods: [String]?, consent: Bool, generateToken: Bool)? {
        state.withLock { state in state.orders[Self.uuid(of: id)].map { ($0.menuMethods, $0.showConsent, $0.generatePaymentToken) } }
    }

    /// The callback Swedbank Pay would post for order `id` now: unsigned, and
    /// naming only the order; nil when the order is unknown.
    public func callback(forOrder id: String) -> String? {
        state.withLock { state in
            guard let order = state.orders[Self.uuid(of: id)] else { return nil }
            return SimulatorJSON.text(["orderReference": order.orderReference ?? "",
                                       "paymentOrder": ["id": order.path, "instrument": order.instrument ?? "", "number": order.number ?? 0]])
        }
    }

    /// What the simulator stores of cards (masked PANs and BINs): no full number, ever.
    public var storedCardText: String {
        state.withLock { state in
            (state.savedCards.values.joined().map { "\($0.maskedPan) \($0.expiry)" } + state.orders.values.compactMap { $0.card?.maskedPan })
                .joined(separator: "\n")
        }
    }

    static func uuid(of id: String) -> String {
        id.split(separator: "/").last.map(String.init) ?? id
    }

    // MARK: Moving money

    /// Pays order `token`'s attempt: a Swish sale (a charge) or a card or
    /// wallet authorization, keeping the card when asked. Returns false when
    /// the order cannot be paid any more.
    @discardableResult
    func pay(_ token: String, instrument: String, card: SwedbankPaySavedCard?, storeCard: Bool = false) -> Bool {
        state.withLock { state in
            guard let id = state.orderOfToken[token], var order = state.orders[id], order.status == "Initialized" else { return false }
            order.status = "Paid"
            order.instrument = instrument
            order.transactionType = instrument == "Swish" ? "Sale" : "Authorization"
            order.number = state.number()
            order.card = card
            order.attempt = nil
            order.problem = nil
            if instrument == "Swish" {
                order.transactions.append(.init(type: "Sale", amount: order.amount, payeeReference: order.payeeReference, number: state.number(), created: Date()))
                state.charges += 1
            }
            if let card, storeCard || order.generatePaymentToken, let payer = order.payerReference {
                _ = state.cards(of: payer)
                var kept = card
                kept.token = SimulatorJSON.uuid()
                kept.behaviour = .frictionless
                state.savedCards[payer, default: []].append(kept)
            }
            state.orders[id] = order
            return true
        }
    }

    /// Ends order `token`'s attempt with a problem (`name`: the last segment
    /// of its type): the order stays `Initialized`, the problem waits for
    /// `acknowledge-failed-attempt`.
    func fail(_ token: String, instrument: String, problem name: String) {
        state.withLock { state in
            guard let id = state.orderOfToken[token], var order = state.orders[id], order.status == "Initialized" else { return }
            let type = SwedbankPayProblems.type(of: name)
            order.problem = .init(type: type, title: SwedbankPayProblems.title(of: name), status: 400, detail: SwedbankPayProblems.detail(of: name))
            order.failedAttempts.append(.init(instrument: instrument, problemType: type, created: Date()))
            order.attempt = nil
            state.orders[id] = order
        }
    }

    /// The problem a card payment of `amount` meets at the acquirer, if any.
    static func acquirerProblem(amount: Int64) -> String? {
        switch amount {
        case 900_361: "acquirerinsufficientfunds"
        case 900_334: "frauddetected"
        case 900_354: "acquirercardexpired"
        case 952_400: "acquirererrordonotretry"
        default: nil
        }
    }
}

/// The problem types the simulator answers with, by the last segment.
enum SwedbankPayProblems {
    static func type(of name: String) -> String {
        switch name {
        case "clientapplaunchfailed", "paymenttokeninactive": SwedbankPayWire.orderProblemBase + name
        case "3dsecuredeclined", "acquirerinsufficientfunds", "acquirercardexpired", "acquirererrordonotretry", "frauddetected":
            "https://api.payex.com/psp/errordetail/creditcard/" + name
        default: SwedbankPayWire.problemBase + name
        }
    }

    static func title(of name: String) -> String {
        switch name {
        case "swishdeclined": "Swish declined"
        case "swishtimeout": "Swish timed out"
        case "bankidcancelled": "BankID cancelled"
        case "usercancelled": "Cancelled by the payer"
        case "clientapplaunchfailed": "The payment app could not be launched"
        case "3dsecuredeclined": "3-D Secure declined"
        case "paymenttokeninactive": "Payment token inactive"
        case "frauddetected": "Fraud detected"
        case "acquirerinsufficientfunds": "Insufficient funds"
        case "acquirercardexpired": "Card expired"
        default: "Payment attempt failed"
        }
    }

    static func detail(of name: String) -> String {
        "The payment attempt failed: \(title(of: name).lowercased())"
    }
}
