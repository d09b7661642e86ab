import Foundation

/// What the Swedbank Pay simulator remembers: payment orders, each with its
/// payment session (the native flow's state), transactions and failed
/// attempts; the cards it keeps per payer reference (brand, BIN and last
/// four, never a number); and how many times money moved.
struct SwedbankPayState: Sendable {
    var orders: [String: SwedbankPayOrder] = [:]
    /// For tests: where answers' API hrefs point instead of the sandbox (``SwedbankPaySimulator/apiHrefBase``).
    var apiHrefBase: String?
    /// The authority (`Host`) of every API request received, oldest first.
    var apiHosts: [String] = []
    /// Order id by session token (the token is in the session's hrefs).
    var orderOfToken: [String: String] = [:]
    var payeeReferences: Set<String> = []
    var savedCards: [String: [SwedbankPaySavedCard]] = [:]
    var charges = 0
    var nextNumber = 40_000_001
    /// The callbacks the simulator would have sent, oldest first.
    var callbacks: [(url: String, body: String)] = []

    /// Bounded: the oldest orders go first.
    static let maxOrders = 10_000

    mutating func add(_ order: SwedbankPayOrder) {
        if orders.count >= Self.maxOrders, let oldest = orders.values.min(by: { $0.createdAt < $1.createdAt }) {
            orders[oldest.id] = nil
            orderOfToken[oldest.token] = nil
        }
        orders[order.id] = order
        orderOfToken[order.token] = order.id
        payeeReferences.insert(order.payeeReference)
    }

    mutating func number() -> Int {
        defer { nextNumber += 1 }
        return nextNumber
    }

    /// The cards kept for `payer`: seeded on first use with the documented
    /// test cards (a frictionless Visa, a Visa whose issuer asks for 3-D
    /// Secure, a Mastercard whose token is inactive).
    mutating func cards(of payer: String) -> [SwedbankPaySavedCard] {
        if let cards = savedCards[payer] { return cards }
        let seeded = [
            SwedbankPaySavedCard(token: SimulatorJSON.uuid(), brand: "Visa", bin: "492500", last4: "0004", expiry: "12/2030", behaviour: .frictionless),
            SwedbankPaySavedCard(token: SimulatorJSON.uuid(), brand: "Visa", bin: "476173", last4: "0416", expiry: "11/2029", behaviour: .challenge),
            SwedbankPaySavedCard(token: SimulatorJSON.uuid(), brand: "MasterCard", bin: "522661", last4: "3406", expiry: "03/2028", behaviour: .inactive),
        ]
        savedCards[payer] = seeded
        return seeded
    }

    /// A card `token` kept for `payer`, if any.
    func card(_ token: String, of payer: String?) -> SwedbankPaySavedCard? {
        guard let payer else { return nil }
        return savedCards[payer]?.first { $0.token == token }
    }
}

/// A card Swedbank Pay keeps for a payer: a token and what may be shown.
struct SwedbankPaySavedCard: Sendable {
    enum Behaviour: Sendable { case frictionless, challenge, inactive }
    var token: String
    var brand: String
    var bin: String
    var last4: String
    /// `MM/YYYY`.
    var expiry: String
    var behaviour: Behaviour

    var maskedPan: String { bin + "******" + last4 }
}

/// One payment order and its payment session.
struct SwedbankPayOrder: Sendable {
    /// The order's uuid; its id in the API is `/psp/paymentorders/<uuid>`.
    var id: String
    /// The session token, in the session's hrefs and the hosted pages' URLs.
    var token: String
    var payeeReference: String
    var orderReference: String?
    var description: String
    var currency: String
    var amount: Int64
    var vatAmount: Int64
    var language: String
    var urls: URLs
    var payerReference: String?
    var generatePaymentToken: Bool
    var metadata: [String: String]
    var createdAt: Date

    var status = "Initialized"
    /// `Authorization` (cards, wallets) or `Sale` (Swish), once paid.
    var transactionType: String?
    var instrument: String?
    /// Card details of a paid card payment (masked).
    var card: SwedbankPaySavedCard?
    var number: Int?
    var transactions: [Transaction] = []
    var failedAttempts: [FailedAttempt] = []

    /// The payment menu's restriction (customize-payment): nil for all.
    var menuMethods: [String]?
    var showConsent = false
    /// The attempt in progress, if any.
    var attempt: Attempt?
    /// The problem of the last attempt, until acknowledged.
    var problem: SessionProblem?

    struct URLs: Sendable {
        var hostUrls: [String]
        var completeUrl: String
        var cancelUrl: String?
        var callbackUrl: String?
        var termsOfServiceUrl: String?
    }

    struct Transaction: Sendable {
        var type: String
        var amount: Int64
        var payeeReference: String
        var number: Int
        var created: Date
    }

    struct FailedAttempt: Sendable {
        var instrument: String
        var problemType: String
        var created: Date
    }

    struct Attempt: Sendable {
        enum Stage: Sendable, Equatable {
            /// Swish on this device: the app has to be opened.
            case launchApp
            /// Swish on another phone: the payer approves there.
            case awaitingPhone
            /// A card whose issuer asked for 3-D Secure.
            case challenge(creq: String, notificationUrl: String)
        }
        var method: String
        var stage: Stage
        var msisdn: String?
        var card: SwedbankPaySavedCard?
        /// The payer agreed, on the hosted card view, to have the card kept.
        var storeCard = false
    }

    struct SessionProblem: Sendable {
        var type: String
        var title: String
        var status: Int
        var detail: String
    }

    var path: String { "/psp/paymentorders/" + id }
    var captured: Int64 { transactions.filter { $0.type == "Capture" || $0.type == "Sale" }.reduce(0) { $0 + $1.amount } }
    var reversed: Int64 { transactions.filter { $0.type == "Reversal" }.reduce(0) { $0 + $1.amount } }
    var cancelled: Bool { transactions.contains { $0.type == "Cancellation" } }
    var remainingCapture: Int64 { status == "Paid" && transactionType == "Authorization" && !cancelled ? amount - captured : 0 }
    var remainingCancellation: Int64 { status == "Paid" && transactionType == "Authorization" && !cancelled && captured == 0 ? amount : 0 }
    var remainingReversal: Int64 { (status == "Paid" || status == "Reversed") ? captured - reversed : 0 }
}
