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

    private struct AmountBody: Fingerprintable {
        var amount: Int64?

        func writeCanonical(to w: inout JSONWriter) {
            w.beginObject()
            if let amount { w.member("amount", amount) }
            w.endObject()
        }
    }

    /// One capture, refund or void. These move money, so each needs an
    /// idempotency key: the provider receives a key derived from it, and a
    /// retry under the same key can never apply twice.
    ///
    /// The amount is held back in the balance and committed *before* the
    /// provider is called; it is applied when the provider confirms, released
    /// when it refuses, and stays held while the outcome is unknown or pending
    /// at the provider, until a retry under the same key settles it. So a
    /// refund can never exceed what was captured, even across crashes.
    private func change(_ operation: PaymentOperation, payment paymentID: String, amount: Int64?,
                        idempotencyKey: String?) async throws -> PaymentChange {
        guard let idempotencyKey else {
            throw ProblemCatalog.problem(code: "invalid_request", detail: "\(operation.rawValue) moves money: it needs an idempotency key, so that a retry can never apply it twice")
        }
        let sessionID = try await sessionID(ofAttempt: paymentID)
        return try await idempotent(idempotencyKey, operation: operation.rawValue, target: paymentID, request: AmountBody(amount: amount)) { key in
            try await self.locks.withLock(sessionID) {
                try await self.changeLocked(operation, sessionID: sessionID, paymentID: paymentID, amount: amount, key: key!)
            }
        }
    }

    private func changeLocked(_ operation: PaymentOperation, sessionID: String, paymentID: String, amount: Int64?,
                              key: IdempotencyScope) async throws -> PaymentChange {
        var session = try await load(sessionID)
        let attempt = try session.attempt(paymentID)
        let providerKey = key.providerKey(operation.rawValue, of: paymentID)
        // A retry of an operation whose outcome was unknown is checked without its own hold.
        var balance = try session.paymentBalance(paymentID)
        balance.release(key: providerKey)
        let money: Money?
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
        guard let reference = attempt.providerReference else {
            throw ProblemCatalog.problem(code: "invalid_state", detail: "payment \(paymentID) has no provider reference")
        }
        let provider = try self.provider(attempt.providerID)
        var at = now()
        func event(_ type: String, detail: String?) -> SessionEvent {
            SessionEvent(sessionID: sessionID, at: at, type: type, attemptID: paymentID, status: attempt.status.rawValue,
                         providerID: attempt.providerID, amount: money, detail: detail)
        }
        // Durable intent: the amount is held before the provider hears of it.
        try session.hold(operation.rawValue, money?.value ?? balance.capturable, key: providerKey, of: paymentID)
        session = try await commit(session, events: [event("payment.\(operation.rawValue)_sent", detail: nil)])

        let call: ProviderCall = switch operation {
        case .capture: .capture(AmountRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: money!,
                                              alreadyCaptured: Money(value: balance.captured, currency: balance.authorized.currency)))
        case .refund: .refund(AmountRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: money!))
        default: .void(VoidRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference))
        }
        let reply = await provider.perform(call)
        record(reply, for: attempt.providerID)
        at = now()
        switch reply {
        case .answered(let result) where result.status == .succeeded:
            try session.release(key: providerKey, of: paymentID)
            // The provider's amount is what moved; it can be no more than was asked.
            let moved = money.map { asked in result.amount.flatMap { $0.currency == asked.currency && $0.value > 0 && $0.value <= asked.value ? $0 : nil } ?? asked }
            switch operation {
            case .capture: try session.capture(moved!, of: paymentID)
            case .refund: try session.refund(moved!, of: paymentID)
            default: try session.void(paymentID)
            }
            session.updatedAt = at
            let change = PaymentChange(paymentId: paymentID, operation: operation, amount: moved,
                                       providerReference: result.providerReference, balance: try session.paymentBalance(paymentID))
            let type = switch operation {
            case .capture: "payment.captured"
            case .refund: "payment.refunded"
            default: "payment.voided"
            }
            try await commit(session, events: [event(type, detail: result.providerStatus.map { "provider status \($0)" })],
                             answer: key.answer(change, at: at))
            return change
        case .answered(let result) where result.status == .pending:
            try await commit(session, events: [event("payment.\(operation.rawValue)_pending", detail: result.providerStatus)])
            throw ProblemCatalog.problem(
                code: "outcome_unknown",
                detail: "\(attempt.providerID) has not finished this \(operation.rawValue); its amount stays held. Retry with the same idempotency key to learn the outcome")
        case .answered(let result):
            try session.release(key: providerKey, of: paymentID)
            let problem = result.problem.map { ProblemCatalog.problem(from: $0, providerID: attempt.providerID) }
                ?? ProblemCatalog.problem(code: "payment_failed", detail: "\(attempt.providerID) answered \(result.status.rawValue) to \(operation.rawValue)")
            try await commit(session, events: [event("payment.\(operation.rawValue)_failed", detail: "\(problem.code): \(problem.detail)")])
            throw problem
        case .notSent(let reason):
            try session.release(key: providerKey, of: paymentID)
            try await commit(session, events: [event("payment.\(operation.rawValue)_failed", detail: "not sent: \(reason)")])
            throw ProblemCatalog.problem(code: "provider_error", detail: "\(attempt.providerID): \(reason); nothing was sent", retryable: true)
        case .invalidRequest(let reason):
            try session.release(key: providerKey, of: paymentID)
            try await commit(session, events: [event("payment.\(operation.rawValue)_failed", detail: "refused as invalid: \(reason)")])
            throw ProblemCatalog.problem(code: "invalid_request", detail: "\(attempt.providerID) refused the \(operation.rawValue): \(reason); nothing was sent")
        case .unknown(let reason):
            try await commit(session, events: [event("payment.\(operation.rawValue)_unknown", detail: reason)])
            throw ProblemCatalog.problem(
                code: "outcome_unknown",
                detail: "\(attempt.providerID): \(reason). Its amount stays held; retry with the same idempotency key: the provider receives the same key and cannot apply it twice")
        }
    }
}
