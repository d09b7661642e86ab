import GatewayPayloads

/// A prepared checkout: what `POST /v1/checkouts` was asked for, and the
/// payment made in its widget once the shopper paid (or gave up).
struct HyperPayCheckout: Sendable {
    var id: String
    var entityId: String
    var amount: Money
    /// `DB` or `PA`.
    var paymentType: String
    var merchantTransactionId: String?
    var shopperResultUrl: String?
    var paymentId: String?
    /// What the merchant sent that only labels the checkout.
    var merchantInvoiceId: String?
    var customerEmail: String?
}

/// One transaction at the simulated OPPWA: the widget's DB or PA, or a
/// back-office CP, RF or RV referencing one. Card data is kept only masked
/// (BIN and last four digits), as OPPWA answers it.
struct HyperPayTransaction: Sendable {
    var id: String
    var paymentType: String
    var entityId: String
    var amount: Money
    var code: String
    var merchantTransactionId: String?
    var brand: String?
    var bin: String?
    var last4: String?
    var referencedId: String?
    var checkoutId: String?
    var timestamp: String
    /// On a DB, PA or CP: what back-office operations have done to it.
    var captured: Int64 = 0
    var refunded: Int64 = 0
    var reversed = false
}

/// A card form that passed and waits for its 3-D Secure step.
struct HyperPayChallenge: Sendable {
    var checkoutId: String
    var brand: String
    var bin: String
    var last4: String
    /// The result the card will get once authenticated.
    var code: String
}

/// Everything the simulator remembers. Bounded: past ``capacity`` checkouts
/// the oldest is forgotten with its payment (its status query then answers
/// "no payment session", as OPPWA does for an old checkout), so a long
/// benchmark against the sandbox does not grow without end.
struct HyperPayState: Sendable {
    static let capacity = 100_000
    var checkouts: [String: HyperPayCheckout] = [:]
    var transactions: [String: HyperPayTransaction] = [:]
    var challenges: [String: HyperPayChallenge] = [:]
    /// Transaction ids by `merchantTransactionId`, oldest first, for the
    /// transaction reports (`GET /v1/query`).
    var ofReference: [String: [String]] = [:]
    var charges = 0
    private var order: [String] = []
    private var head = 0

    /// Records `transaction`, findable by its `merchantTransactionId`.
    mutating func record(_ transaction: HyperPayTransaction) {
        if transactions[transaction.id] == nil, let reference = transaction.merchantTransactionId {
            ofReference[reference, default: []].append(transaction.id)
        }
        transactions[transaction.id] = transaction
    }

    /// Remembers `checkout`, forgetting the oldest past ``capacity``.
    mutating func add(_ checkout: HyperPayCheckout) {
        checkouts[checkout.id] = checkout
        order.append(checkout.id)
        while checkouts.count > Self.capacity, head < order.count {
            if let gone = checkouts.removeValue(forKey: order[head]), let paymentId = gone.paymentId {
                if let reference = transactions[paymentId]?.merchantTransactionId {
                    ofReference[reference]?.removeAll { $0 == paymentId }
                    if ofReference[reference]?.isEmpty == true { ofReference[reference] = nil }
                }
                transactions[paymentId] = nil
            }
            head += 1
        }
        if head > Self.capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}
