import Foundation
import GatewayPayloads

extension Checkout {
    /// Captures `amount` (all that is left when nil) of an authorized payment.
    public func capture(payment paymentID: String, amount: Int64? = nil, idempotencyKey: String? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.capture, payment: paymentID, amount: amount, idempotencyKey: idempotencyKey)
        }
    }

    /// Refunds `amount` (all that is left when nil) of a payment; partial and
    /// repeated refunds are allowed, never beyond what was captured.
    public func refund(payment paymentID: String, amount: Int64? = nil, idempotencyKey: String? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.refund, payment: paymentID, amount: amount, idempotencyKey: idempotencyKey)
        }
    }

    /// Releases an authorization that was not captured.
    public func void(payment paymentID: String, idempotencyKey: String? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.void, payment: paymentID, amount: nil, idempotencyKey: idempotencyKey)
        }
    }

    private struct AmountBody: Codable { var amount: Int64? }

    /// One capture, refund or void: checked against the balance, sent to the
    /// provider, applied only when the provider confirms it.
    private func change(_ operation: PaymentOperation, payment paymentID: String, amount: Int64?,
                        idempotencyKey: String?) async throws -> PaymentChange {
        let sessionID = try await sessionID(ofAttempt: paymentID)
        return try await idempotent(idempotencyKey, operation: operation.rawValue, target: paymentID, request: AmountBody(amount: amount)) { key in
            try await self.locks.withLock(sessionID) {
                var session = try await self.load(sessionID)
                let attempt = try session.existingAttempt(paymentID)
                let money: Money?
                do {
                    let balance = try session.paymentBalance(paymentID)
                    switch operation {
                    case .capture:
                        money = Money(value: amount ?? balance.capturable, currency: balance.authorized.currency)
                        try balance.checkCapture(money!)
                    case .refund:
                        money = Money(value: amount ?? balance.refundable, currency: balance.authorized.currency)
                        try balance.checkRefund(money!)
                    default:
                        money = nil
                        try balance.checkVoid()
                    }
                }
                guard let reference = attempt.providerReference else {
                    throw ProblemCatalog.problem(code: "invalid_state", detail: "payment \(paymentID) has no provider reference")
                }
                let provider = try self.provider(attempt.providerID)
                let providerKey = key?.providerKey(operation.rawValue, of: paymentID) ?? Identifiers.make(operation.rawValue)
                let call: ProviderCall = switch operation {
                case .capture: .capture(AmountRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: money!))
                case .refund: .refund(AmountRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: money!))
                default: .void(VoidRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference))
                }
                let reply = await provider.perform(call)
                self.record(reply, for: attempt.providerID)
                let at = self.now()
                func event(_ type: String, detail: String?) -> SessionEvent {
                    SessionEvent(sessionID: sessionID, at: at, type: type, attemptID: paymentID, status: attempt.status.rawValue,
                                 providerID: attempt.providerID, amount: money, detail: detail)
                }
                switch reply {
                case .answered(let result) where result.status == .succeeded:
                    let moved = result.amount ?? money
                    do {
                        switch operation {
                        case .capture: try session.capture(moved!, of: paymentID)
                        case .refund: try session.refund(moved!, of: paymentID)
                        default: try session.void(paymentID)
                        }
                    } catch {
                        // The provider confirmed something the balance refuses:
                        // record it for a person, change nothing.
                        try await self.commit(session, events: [event("payment.\(operation.rawValue).discrepancy", detail: "\(error)")])
                        throw ProblemCatalog.problem(code: "provider_error", detail: "\(attempt.providerID) confirmed a \(operation.rawValue) the balance refuses: \(error)")
                    }
                    session.updatedAt = at
                    let change = PaymentChange(paymentId: paymentID, operation: operation, amount: moved,
                                               providerReference: result.providerReference, balance: try session.paymentBalanceOrProblem(paymentID))
                    let type = switch operation {
                    case .capture: "payment.captured"
                    case .refund: "payment.refunded"
                    default: "payment.voided"
                    }
                    try await self.commit(session, events: [event(type, detail: result.providerStatus.map { "provider status \($0)" })],
                                          answer: key?.answer(change, at: at))
                    return change
                case .answered(let result):
                    let problem = result.problem.map { ProblemCatalog.problem(from: $0, providerID: attempt.providerID) }
                        ?? ProblemCatalog.problem(code: "payment_failed", detail: "\(attempt.providerID) answered \(result.status.rawValue) to \(operation.rawValue)")
                    try await self.commit(session, events: [event("payment.\(operation.rawValue)_failed", detail: "\(problem.code): \(problem.detail)")])
                    throw problem
                case .notSent(let reason):
                    throw ProblemCatalog.problem(code: "provider_error", detail: "\(attempt.providerID): \(reason); nothing was sent", retryable: true)
                case .unknown(let reason):
                    try await self.commit(session, events: [event("payment.\(operation.rawValue)_unknown", detail: reason)])
                    throw ProblemCatalog.problem(
                        code: "outcome_unknown",
                        detail: "\(attempt.providerID): \(reason). Retry with the same idempotency key: the provider receives the same key and cannot apply it twice")
                }
            }
        }
    }
}

extension Session {
    func existingAttempt(_ id: String) throws -> Attempt {
        do { return try attempt(id) }
    }

    func paymentBalanceOrProblem(_ id: String) throws -> PaymentBalance {
        do { return try paymentBalance(id) }
    }
}
