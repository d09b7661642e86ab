import Foundation
import GatewayPayloads

/// Where an attempt stands.
public enum AttemptStatus: String, Sendable, Codable, CaseIterable {
    /// Sent (or about to be sent) to a provider; no answer yet.
    case processing
    /// Not final: the payer must act, or the outcome is unknown until a verify.
    case pending
    /// Reserved for manual capture. Final.
    case authorized
    /// Charged. Final.
    case succeeded
    /// Not charged. Final.
    case failed
    /// Not charged; the payer or merchant cancelled. Final.
    case cancelled

    /// Whether no further transition is possible.
    public var isFinal: Bool { self != .processing && self != .pending }
    /// Whether money was reserved or moved.
    public var isPayment: Bool { self == .authorized || self == .succeeded }

    /// The transitions an attempt may make. Final states have none: a result
    /// that arrives for a final attempt (a late webhook) is an event to log,
    /// never a change of what was decided.
    public func canMove(to next: AttemptStatus) -> Bool {
        switch self {
        case .processing: next != .processing
        case .pending: next != .processing
        case .authorized, .succeeded, .failed, .cancelled: false
        }
    }
}

/// One try at paying a session with one method through one provider.
public struct Attempt: Sendable, Equatable {
    public var id: String
    public var method: String
    public var providerID: String
    /// Why this provider was chosen (routing's explanation, kept for audit).
    public var routingReason: String
    public private(set) var status: AttemptStatus
    public var providerReference: String?
    /// The provider's own status or result code, for support.
    public var providerStatus: String?
    /// What the payer must do next (pending only).
    public var action: PaymentAction?
    /// Why it failed or was cancelled; on pending, a retryable problem with the
    /// payer's last step (a wrong OTP) or the unknown outcome being reconciled.
    public var problem: Problem?
    /// What was asked.
    public var requested: Money
    /// Set once the attempt is a payment.
    public var balance: PaymentBalance?
    public var createdAt: Date
    public var updatedAt: Date
    /// While `processing`: until when the engine that sent it owns it. Past
    /// this (the engine crashed), reconciliation treats it as pending.
    public var leaseUntil: Date?
    /// While live: when reconciliation next verifies it with the provider.
    public var nextCheckAt: Date?
    /// How many verifies reconciliation has made.
    public var checks: Int

    public init(id: String, method: String, providerID: String, routingReason: String, requested: Money, at now: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.method = method
        self.providerID = providerID
        self.routingReason = routingReason
        self.status = .processing
        self.requested = requested
        self.createdAt = now
        self.updatedAt = now
        self.checks = 0
    }

    /// Moves to `next`, or refuses an illegal transition. Becoming a payment
    /// opens its balance with the approved amount (which a partial approval
    /// makes smaller than what was asked).
    public mutating func move(to next: AttemptStatus, approved: Money? = nil, capture: CaptureMode = .automatic) throws(DomainError) {
        guard status.canMove(to: next) else { throw .illegalAttemptTransition(from: status, to: next) }
        if next.isPayment {
            let amount = approved ?? requested
            guard amount.currency == requested.currency else { throw .currencyMismatch(expected: requested.currency, got: amount.currency) }
            guard amount.value > 0 else { throw .nonPositiveAmount(amount.value) }
            // `succeeded` means charged, whatever was asked: a provider that
            // captured a manual-capture payment at once has still moved the money.
            balance = PaymentBalance(authorized: amount, capturedAutomatically: next == .succeeded)
        }
        status = next
        if next.isFinal {
            action = nil
            leaseUntil = nil
            nextCheckAt = nil
        }
    }
}

extension Attempt {
    /// A charge the provider made after this attempt was recorded `failed`
    /// or `cancelled` (it acted on a request the host had given up on):
    /// the one change a final attempt takes, to the payment it is. Its
    /// balance opens with the approved amount, as ``move(to:approved:capture:)``'s does.
    public mutating func recordLateCharge(as next: AttemptStatus, approved: Money) throws(DomainError) {
        guard status == .failed || status == .cancelled, next.isPayment else { throw .illegalAttemptTransition(from: status, to: next) }
        guard approved.currency == requested.currency else { throw .currencyMismatch(expected: requested.currency, got: approved.currency) }
        guard approved.value > 0 else { throw .nonPositiveAmount(approved.value) }
        balance = PaymentBalance(authorized: approved, capturedAutomatically: next == .succeeded)
        status = next
        problem = nil
    }

    /// When reconciliation next has work on this attempt, as a store indexes
    /// it (nil: nothing due): a processing attempt when its lease runs out,
    /// a pending one at its next check, a payment with a capture, refund or
    /// void held when the earliest of them is next checked. A live attempt
    /// with no time recorded is due at once.
    public var dueAt: Date? {
        switch status {
        case .processing: leaseUntil ?? Date(timeIntervalSince1970: 0)
        case .pending: nextCheckAt ?? Date(timeIntervalSince1970: 0)
        default: balance.flatMap { $0.inFlight.isEmpty ? nil : ($0.nextHeldCheck ?? Date(timeIntervalSince1970: 0)) }
        }
    }

    /// For the document codec only: restores the status as it was stored.
    mutating func restore(status: AttemptStatus) {
        self.status = status
    }
}
