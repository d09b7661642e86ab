import Foundation
import GatewayPayloads

/// Where a checkout session stands.
public enum SessionStatus: String, Sendable, Codable, CaseIterable {
    /// Accepting attempts.
    case open
    /// An attempt succeeded (or was authorized); no more attempts.
    case completed
    /// Aborted by the merchant.
    case cancelled
    /// Abandoned past its deadline.
    case expired

    public var isFinal: Bool { self != .open }
}

/// A shopper's checkout: an amount to pay, and the attempts at paying it.
///
/// Rules: one live attempt at a time (a new one only after every earlier one
/// failed or was cancelled, so two providers can never both be charging);
/// the first attempt that becomes a payment completes the session; a session
/// with a live attempt cannot be aborted or expire (its money may still move:
/// it is reconciled first).
public struct Session: Sendable, Equatable {
    // The members set when a session is made are kept as JSON once it is
    // committed (``fixed``), so each later commit writes only what changed;
    // setting any of them drops those bytes.
    public var id: String { didSet { fixed.written = nil } }
    /// Test or live, from the API key that opened it: only providers of the
    /// same mode ever serve it.
    public var mode: PaymentMode { didSet { fixed.written = nil } }
    public var amount: Money { didSet { fixed.written = nil } }
    public var country: String? { didSet { fixed.written = nil } }
    public var orderID: String { didSet { fixed.written = nil } }
    public var capture: CaptureMode { didSet { fixed.written = nil } }
    public var payer: Payer? { didSet { fixed.written = nil } }
    public var returnURL: String? { didSet { fixed.written = nil } }
    public private(set) var status: SessionStatus
    public private(set) var attempts: [Attempt]
    public var createdAt: Date { didSet { fixed.written = nil } }
    public var updatedAt: Date
    /// When an unpaid session stops accepting attempts.
    public var expiresAt: Date { didSet { fixed.written = nil } }
    /// Bumped by the store on every committed change (optimistic concurrency).
    public var version: Int
    /// What the payer can use, as providers listed it when the session was
    /// created (ABI 1.1 `instruments`); nil when no provider was asked.
    /// References are sealed in the ids, never kept in the clear.
    public var instruments: [OfferedInstrument]? { didSet { fixed.written = nil } }
    /// The JSON of the members above that do not change after the session is
    /// made (``keepFixedMembersWritten()``), spliced into every document and
    /// answer written after; not part of the session's value (`==` ignores it).
    var fixed = FixedMembers()

    struct FixedMembers: Sendable, Equatable {
        /// One reference, so that copying a session (the cache, snapshots)
        /// costs one retain more, not one per array.
        final class Written: Sendable {
            /// `"id":…,"mode":…,…,"expiresAt":…`, as ``Session/writeFixedMembers(to:)`` writes them.
            let members: [UInt8]
            /// The `instruments` array.
            let instruments: [UInt8]?
            init(members: [UInt8], instruments: [UInt8]?) {
                self.members = members
                self.instruments = instruments
            }
        }

        var written: Written?
        /// Bytes are a cache of the session's values: never a difference.
        static func == (a: FixedMembers, b: FixedMembers) -> Bool { true }
    }

    public init(id: String, mode: PaymentMode = .test, amount: Money, country: String?, orderID: String, capture: CaptureMode,
                payer: Payer? = nil, returnURL: String? = nil,
                createdAt: Date = Date(timeIntervalSince1970: 0), expiresAt: Date = .distantFuture) throws(DomainError) {
        guard amount.value > 0 else { throw .nonPositiveAmount(amount.value) }
        self.id = id
        self.mode = mode
        self.amount = amount
        self.country = country
        self.orderID = orderID
        self.capture = capture
        self.payer = payer
        self.returnURL = returnURL
        self.status = .open
        self.attempts = []
        self.createdAt = createdAt
        self.updatedAt = createdAt
        self.expiresAt = expiresAt
        self.version = 0
    }

    /// The attempt `id`.
    public func attempt(_ id: String) throws(DomainError) -> Attempt {
        guard let attempt = attempts.first(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        return attempt
    }

    /// Edits attempt `id`'s non-status fields (reference, action, problem, schedule).
    public mutating func update(attempt id: String, _ edit: (inout Attempt) -> Void) throws(DomainError) {
        guard let index = attempts.firstIndex(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        edit(&attempts[index])
    }

    /// The attempt that is still processing or pending, if any.
    public var liveAttempt: Attempt? { attempts.first { !$0.status.isFinal } }
    /// The attempt that became the payment, if any.
    public var payment: Attempt? { attempts.first { $0.status.isPayment } }

    /// Checks that a new attempt may start now.
    public func checkCanStartAttempt() throws(DomainError) {
        guard status == .open else { throw .sessionNotOpen(status) }
        if let live = liveAttempt { throw .attemptInProgress(attemptID: live.id) }
        if payment != nil { throw .sessionAlreadyPaid }
    }

    /// Adds `attempt` (in `processing`).
    public mutating func start(_ attempt: Attempt) throws(DomainError) {
        try checkCanStartAttempt()
        attempts.append(attempt)
    }

    /// Moves attempt `id` to `next`; a payment completes the session.
    public mutating func move(attempt id: String, to next: AttemptStatus, approved: Money? = nil) throws(DomainError) {
        guard let index = attempts.firstIndex(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        try attempts[index].move(to: next, approved: approved, capture: capture)
        if next.isPayment { status = .completed }
    }

    /// A charge the provider made on attempt `id` after it was recorded
    /// failed or cancelled (``Attempt/recordLateCharge(as:approved:)``).
    /// True when it became the session's payment: the session was unpaid
    /// (open, or expired) and now completes. False when another attempt
    /// paid it, or the merchant aborted it: the charge is a payment of its
    /// own (with its balance), to be reversed.
    public mutating func recordLateCharge(attempt id: String, as next: AttemptStatus, approved: Money) throws(DomainError) -> Bool {
        guard let index = attempts.firstIndex(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        let paidBefore = attempts.contains { $0.id != id && $0.status.isPayment }
        try attempts[index].recordLateCharge(as: next, approved: approved)
        guard !paidBefore, status == .open || status == .expired else { return false }
        status = .completed
        return true
    }

    /// Captures `amount` of payment `id` (manual capture; full or partial).
    public mutating func capture(_ amount: Money, of id: String, providerReference: String? = nil) throws(DomainError) {
        var balance = try paymentBalance(id)
        try balance.capture(amount, providerReference: providerReference)
        try setBalance(balance, of: id)
    }

    /// Refunds `amount` of payment `id` (partial and repeated; never beyond what was captured).
    public mutating func refund(_ amount: Money, of id: String) throws(DomainError) {
        var balance = try paymentBalance(id)
        try balance.refund(amount)
        try setBalance(balance, of: id)
    }

    /// Voids payment `id`'s uncaptured authorization.
    public mutating func void(_ id: String) throws(DomainError) {
        var balance = try paymentBalance(id)
        try balance.void()
        try setBalance(balance, of: id)
    }

    /// Holds back, or releases, an amount in flight on payment `id` (see ``PaymentBalance/inFlight``).
    public mutating func hold(_ operation: PaymentOperation, _ amount: Int64, key: String, of id: String) throws(DomainError) {
        var balance = try paymentBalance(id)
        balance.hold(operation, amount, key: key)
        try setBalance(balance, of: id)
    }

    public mutating func hold(_ held: PaymentBalance.InFlight, key: String, of id: String) throws(DomainError) {
        var balance = try paymentBalance(id)
        balance.hold(held, key: key)
        try setBalance(balance, of: id)
    }

    public mutating func release(key: String, of id: String) throws(DomainError) {
        var balance = try paymentBalance(id)
        balance.release(key: key)
        try setBalance(balance, of: id)
    }

    /// The balance of payment `id`.
    public func paymentBalance(_ id: String) throws(DomainError) -> PaymentBalance {
        guard let attempt = attempts.first(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        guard let balance = attempt.balance else { throw .notAPayment(attempt.status) }
        return balance
    }

    private mutating func setBalance(_ balance: PaymentBalance, of id: String) throws(DomainError) {
        guard let index = attempts.firstIndex(where: { $0.id == id }) else { throw .unknownAttempt(id) }
        attempts[index].balance = balance
    }

    /// The merchant aborts the checkout.
    public mutating func abort() throws(DomainError) {
        try checkCanEnd()
        status = .cancelled
    }

    /// The session passed its deadline unpaid.
    public mutating func expire() throws(DomainError) {
        try checkCanEnd()
        status = .expired
    }

    private func checkCanEnd() throws(DomainError) {
        guard status == .open else { throw .sessionNotOpen(status) }
        if let live = liveAttempt { throw .attemptInProgress(attemptID: live.id) }
    }
}

extension Session {
    /// For the document codec only: sets what the domain's operations
    /// otherwise guard, to restore a session exactly as it was stored.
    mutating func restore(status: SessionStatus, attempts: [Attempt]) {
        self.status = status
        self.attempts = attempts
    }
}
