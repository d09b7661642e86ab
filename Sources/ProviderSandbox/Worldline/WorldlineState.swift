import Foundation

/// What the Worldline simulator remembers: payments (each with its card's
/// product, BIN, last four and expiry, never the number or the CVV; its
/// captures and refunds; its open 3-D Secure challenge), client sessions,
/// the nonces of the encrypted inputs already used, idempotence records,
/// the last signed request, and how many times money moved.
struct WorldlineState: Sendable {
    var payments: [String: WorldlinePayment] = [:]
    /// Payment ids by merchant reference, oldest first.
    var paymentsOfReference: [String: [String]] = [:]
    /// Payment id by open 3-D Secure challenge.
    var paymentOfChallenge: [String: String] = [:]
    var sessions: [String: WorldlineClientSession] = [:]
    /// The nonces of decrypted inputs, each kept until its client session expires.
    var usedNonces: [String: Date] = [:]
    var idempotence = WorldlineIdempotence()
    var lastSignedRequest: WorldlineSignedRequest?
    var charges = 0
    /// Webhook deliveries, latest last (bounded).
    var deliveries: [WorldlineDelivery] = []

    /// Bounded: the oldest payments and sessions go first.
    static let maxPayments = 10_000
    static let maxSessions = 10_000

    /// A new payment id: ten digits and `_0` (Direct's form, `3254564315_0`).
    mutating func newPaymentID() -> String {
        while true {
            let id = String(Int.random(in: 1_000_000_000...9_999_999_999)) + "_0"
            if payments[id] == nil { return id }
        }
    }

    mutating func add(_ payment: WorldlinePayment) {
        if payments.count >= Self.maxPayments, let oldest = payments.values.min(by: { $0.created < $1.created }) {
            payments[oldest.id] = nil
            if let challenge = oldest.challenge { paymentOfChallenge[challenge] = nil }
            if let reference = oldest.merchantReference { paymentsOfReference[reference]?.removeAll { $0 == oldest.id } }
        }
        payments[payment.id] = payment
        if let reference = payment.merchantReference { paymentsOfReference[reference, default: []].append(payment.id) }
        if let challenge = payment.challenge { paymentOfChallenge[challenge] = payment.id }
    }

    mutating func add(_ session: WorldlineClientSession) {
        if sessions.count >= Self.maxSessions, let oldest = sessions.values.min(by: { $0.expiresAt < $1.expiresAt }) {
            sessions[oldest.id] = nil
        }
        sessions[session.id] = session
    }

    /// The session `id` if it is still alive and belongs to `merchant`.
    func liveSession(_ id: String, merchant: String, now: Date = Date()) -> WorldlineClientSession? {
        guard let session = sessions[id], session.merchantID == merchant, session.expiresAt > now else { return nil }
        return session
    }

    /// Marks `nonce` used until `until` (its session's end): false when it was already.
    mutating func useNonce(_ nonce: String, until: Date, now: Date = Date()) -> Bool {
        if let kept = usedNonces[nonce], kept > now { return false }
        if usedNonces.count >= Self.maxSessions * 10 { usedNonces = usedNonces.filter { $0.value > now } }
        usedNonces[nonce] = until
        return true
    }

    /// Approves payment `id` (after its card, or its 3-D Secure challenge):
    /// a sale is captured at once (one charge), an authorisation waits for
    /// captures.
    mutating func approve(_ id: String) {
        guard var payment = payments[id] else { return }
        payment.authorisationCode = String(Int.random(in: 100_000...999_999))
        payment.errors = []
        if payment.authorizationMode == "SALE" {
            payment.status = "CAPTURED"
            payment.statusCode = 9
            payment.addOperation(.capture, amount: payment.amount)
            payment.captureClosed = true
            charges += 1
        } else {
            payment.status = "PENDING_CAPTURE"
            payment.statusCode = 5
        }
        payment.updated = Date()
        payments[id] = payment
    }

    /// Closes payment `id`'s 3-D Secure challenge, if open.
    mutating func closeChallenge(of id: String) {
        guard let challenge = payments[id]?.challenge else { return }
        paymentOfChallenge[challenge] = nil
        payments[id]?.challenge = nil
    }
}

/// A card as the simulator keeps it: what may be shown.
struct WorldlineCard: Sendable {
    /// Visa 1, American Express 2, Mastercard 3.
    var productId: Int
    var bin: String
    var last4: String
    var length: Int
    /// `MMYY`.
    var expiry: String
    /// The stored card's token, when it paid by token.
    var token: String?

    /// `************1111`: stars for all but the last four.
    var masked: String { String(repeating: "*", count: max(0, length - 4)) + last4 }
}

/// One payment.
struct WorldlinePayment: Sendable {
    enum OperationKind: Sendable { case capture, refund }

    struct Operation: Sendable {
        var id: String
        var kind: OperationKind
        var amount: Int64
        var created: Date
    }

    var id: String
    var merchantID: String
    var merchantReference: String?
    var amount: Int64
    var currency: String
    /// `SALE`, `PRE_AUTHORIZATION` or `FINAL_AUTHORIZATION`.
    var authorizationMode: String
    var card: WorldlineCard
    var status: String
    var statusCode: Int
    var errors: [WorldlineWire.Issue] = []
    var operations: [Operation] = []
    /// No more captures: a sale, a final capture, or a cancel after partial captures.
    var captureClosed = false
    /// What cancels released of the authorisation, in minor units.
    var cancelled: Int64 = 0
    /// Where its status changes are posted (`feedbacks.webhooksUrls`).
    var webhookURLs: [String] = []
    var authorisationCode: String?
    /// The open 3-D Secure challenge (the page's id), its `RETURNMAC` and the merchant's return URL.
    var challenge: String?
    var returnMAC: String?
    var returnURL: String?
    var created = Date()
    var updated = Date()

    var captured: Int64 { operations.filter { $0.kind == .capture }.reduce(0) { $0 + $1.amount } }
    var refunded: Int64 { operations.filter { $0.kind == .refund }.reduce(0) { $0 + $1.amount } }
    /// What a capture may still take.
    var capturable: Int64 { status == "PENDING_CAPTURE" && !captureClosed ? amount - captured - cancelled : 0 }
    /// What a refund may still give back.
    var refundable: Int64 { captured - refunded }

    /// Records a capture or refund; its id is the payment's number and the
    /// operation's sequence (`3254564315_1`, `3254564315_2`, …).
    @discardableResult
    mutating func addOperation(_ kind: OperationKind, amount: Int64) -> Operation {
        let number = id.split(separator: "_").first.map(String.init) ?? id
        let operation = Operation(id: number + "_" + String(operations.count + 1), kind: kind, amount: amount, created: Date())
        operations.append(operation)
        updated = operation.created
        return operation
    }
}

/// A client session (`POST /v2/{merchantId}/sessions`): what a device's
/// client API calls are authorised by.
struct WorldlineClientSession: Sendable {
    var id: String
    var customerId: String
    var merchantID: String
    var expiresAt: Date
}
