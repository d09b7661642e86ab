import Foundation
import GatewayPayloads

extension Checkout {
    /// Captures `amount` (all that is left when nil) of an authorized payment.
    public func capture(payment paymentID: String, amount: Int64? = nil, idempotencyKey: String? = nil,
                        mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.capture, payment: paymentID, amount: amount, idempotencyKey: idempotencyKey, mode: mode)
        }
    }

    /// Refunds `amount` (all that is left when nil) of a payment; partial and
    /// repeated refunds are allowed, never beyond what was captured.
    public func refund(payment paymentID: String, amount: Int64? = nil, idempotencyKey: String? = nil,
                       mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.refund, payment: paymentID, amount: amount, idempotencyKey: idempotencyKey, mode: mode)
        }
    }

    /// Releases an authorization that was not captured.
    public func void(payment paymentID: String, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await guarded {
            try await change(.void, payment: paymentID, amount: nil, idempotencyKey: idempotencyKey, mode: mode)
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
    /// - The amount is held back in the balance, and the key bound to the
    ///   request, in one commit *before* the provider is called. The hold is
    ///   applied when the provider confirms, released when it provably did
    ///   nothing, and otherwise stays until the operation is settled: by a
    ///   retry under the same key, or by reconciliation, which sends the same
    ///   operation under the same provider key (``settleHeld(_:)``). A
    ///   crashed engine's holds are picked up once their lease ends.
    /// - One money-moving operation per payment at a time: while one is
    ///   held, another is refused (`operation_in_progress`), so no adapter
    ///   ever has to infer one operation's fate from another's totals.
    private func change(_ operation: PaymentOperation, payment paymentID: String, amount: Int64?,
                        idempotencyKey: String?, mode: PaymentMode?) async throws -> PaymentChange {
        guard let idempotencyKey else {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "\(operation.rawValue) moves money: it needs an idempotency key, so that a retry can never apply it twice")
        }
        let sessionID = try await sessionID(ofAttempt: paymentID)
        let sessionMode = try await self.mode(ofSession: sessionID, caller: mode)
        return try await idempotency.run(idempotencyKey, mode: sessionMode, operation: operation.rawValue, target: paymentID,
                                    request: AmountBody(amount: amount)) { key in
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
        var balance = try session.paymentBalance(paymentID)
        // A retry of an operation still held is checked without its own hold.
        let earlier = balance.inFlight[providerKey]
        // Sent by another host's request that may still be waiting for its
        // answer (on this host the key's gate runs one request at a time, so
        // its own sender is done): not sent again at the same moment; once
        // its lease ends, a retry sends it again under the same provider
        // key, and reconciliation settles it.
        if let earlier, earlier.sentBy != engineID, earlier.awaitsItsAnswer(at: now()), let until = earlier.nextCheckAt {
            throw ProblemCatalog.problem(
                code: .operationInProgress,
                detail: "the \(earlier.operation) under this idempotency key was sent to the provider and its answer is not recorded yet "
                    + "(another host's request is waiting for it); retry with the same key after \(until)")
        }
        balance.release(key: providerKey)
        if let other = balance.inFlight.values.first {
            throw ProblemCatalog.problem(
                code: .operationInProgress,
                detail: "a \(other.operation) of \(other.amount) on payment \(paymentID) is not settled yet (\(other.reason ?? "held")); "
                    + "one money-moving operation runs at a time: retry once it is settled")
        }
        let money: Money?
        switch operation {
        case .capture:
            money = Money(value: earlier?.amount ?? amount ?? balance.capturable, currency: balance.authorized.currency)
            try balance.checkCapture(money!)
        case .refund:
            money = Money(value: earlier?.amount ?? amount ?? balance.refundable, currency: balance.authorized.currency)
            try balance.checkRefund(money!)
        default:
            money = nil
            try balance.checkVoid()
        }
        guard attempt.providerReference != nil else {
            throw ProblemCatalog.problem(code: .invalidState, detail: "payment \(paymentID) has no provider reference")
        }
        let provider = try self.provider(attempt.providerID)
        let at = now()
        // Durable intent: the amount is held, and the key bound, before the provider hears of it.
        let held = PaymentBalance.InFlight(
            operation: operation, amount: money?.value ?? balance.capturable, requestKey: key.key,
            reason: PaymentBalance.InFlight.sent(to: attempt.providerID), since: earlier?.since ?? at,
            nextCheckAt: leaseEnd(attempt.providerID, from: at), checks: earlier?.checks ?? 0, sentBy: engineID)
        try session.hold(held, key: providerKey, of: paymentID)
        session = try await commit(session, events: [paymentEvent(.held(operation, .sent), session: session, attempt: attempt, amount: money, at: at)],
                                   answer: key.bound == nil ? key.intent(reference: providerKey, at: at) : nil)
        let reply = await provider.perform(try call(operation, paymentID: paymentID, providerKey: providerKey, held: held, session: session))
        record(reply, for: attempt.providerID)
        return try await settle(reply, operation: operation, providerKey: providerKey, retry: earlier != nil, session: &session,
                                paymentID: paymentID, key: key)
    }

    /// The provider call for a held operation: the same one, under the same
    /// provider key, however often it is sent.
    private func call(_ operation: PaymentOperation, paymentID: String, providerKey: String, held: PaymentBalance.InFlight,
                      session: Session) throws -> ProviderCall {
        let attempt = try session.attempt(paymentID)
        let balance = try session.paymentBalance(paymentID)
        let currency = balance.authorized.currency
        let reference = attempt.providerReference ?? ""
        let amount = Money(value: held.amount, currency: currency)
        return switch operation {
        case .capture:
            .capture(AmountRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: amount,
                                   alreadyCaptured: Money(value: balance.captured, currency: currency)))
        case .refund:
            // The captures the provider confirmed, oldest first, when every one has its reference (a partial list would misplace the refund).
            .refund(AmountRequest(
                paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference, amount: amount,
                captures: balance.captures.isEmpty || balance.captures.contains { $0.providerReference == nil } ? nil
                    : balance.captures.map { CaptureReference(providerReference: $0.providerReference!, amount: Money(value: $0.amount, currency: currency)) },
                alreadyRefunded: Money(value: balance.refunded, currency: currency)))
        default:
            .void(VoidRequest(paymentId: paymentID, idempotencyKey: providerKey, providerReference: reference))
        }
    }

    /// Applies the provider's reply to the operation held under
    /// `providerKey` and commits it: the change when money moved, else the
    /// problem thrown. `retry`: an earlier try of the same operation may
    /// have reached the provider, so a reply saying this try sent nothing
    /// settles nothing (the hold stays).
    private func settle(_ reply: ProviderReply, operation: PaymentOperation, providerKey: String, retry: Bool,
                        session: inout Session, paymentID: String, key: IdempotencyScope?) async throws -> PaymentChange {
        let attempt = try session.attempt(paymentID)
        guard let held = try session.paymentBalance(paymentID).inFlight[providerKey] else {
            throw ProblemCatalog.problem(code: .invalidState, detail: "the \(operation.rawValue) under \(providerKey) is no longer held")
        }
        let at = now()
        let asked: Money? = operation == .void ? nil : Money(value: held.amount, currency: attempt.requested.currency)
        func keepHeld(_ reason: String, event stage: SessionEvent.Kind.Stage, detail: String?) async throws {
            var kept = held
            kept.reason = reason
            kept.nextCheckAt = at.addingTimeInterval(configuration.backoff(after: held.checks))
            try session.hold(kept, key: providerKey, of: paymentID)
            session.updatedAt = at
            session = try await commit(session, events: [paymentEvent(.held(operation, stage), session: session, attempt: attempt, amount: asked, at: at, detail: detail)])
        }
        func release(_ detail: String) async throws {
            // The reversal of a late charge is the payer's money: refused, it stays held and is sent again.
            if providerKey.hasSuffix(Self.lateChargeReversal) {
                logger.error("the \(operation.rawValue) reversing a late charge on payment \(paymentID) was refused (\(detail)); it stays held and is sent again")
                try await keepHeld("refused (\(detail)); a late charge is reversed, so it is sent again until it is", event: .refused, detail: detail)
                return
            }
            try session.release(key: providerKey, of: paymentID)
            session.updatedAt = at
            session = try await commit(session, events: [paymentEvent(.held(operation, .failed), session: session, attempt: attempt, amount: asked, at: at, detail: detail)])
        }
        switch reply {
        case .answered(let result) where result.status == .succeeded:
            try session.release(key: providerKey, of: paymentID)
            // The provider's amount is what moved; it can be no more than was asked.
            let moved = asked.map { asked in result.amount.flatMap { $0.currency == asked.currency && $0.value > 0 && $0.value <= asked.value ? $0 : nil } ?? asked }
            switch operation {
            case .capture: try session.capture(moved!, of: paymentID, providerReference: result.providerReference)
            case .refund: try session.refund(moved!, of: paymentID)
            default: try session.void(paymentID)
            }
            session.updatedAt = at
            let change = PaymentChange(paymentId: paymentID, operation: operation, amount: moved,
                                       providerReference: result.providerReference, balance: try session.paymentBalance(paymentID))
            session = try await commit(session, events: [paymentEvent(.settled(operation), session: session, attempt: attempt, amount: moved, at: at,
                                                                      detail: result.providerStatus.map { "provider status \($0)" })],
                                       answer: key?.answer(change, reference: providerKey, at: at))
            return change
        case .answered(let result) where result.status == .pending:
            try await keepHeld("pending at \(attempt.providerID)", event: .pending, detail: result.providerStatus)
            throw ProblemCatalog.problem(
                code: .outcomeUnknown,
                detail: "\(attempt.providerID) has not finished this \(operation.rawValue); its amount stays held until it is settled. Retry with the same idempotency key to learn the outcome")
        case .answered(let result):
            let problem = result.problem.map { ProblemCatalog.problem(from: $0, providerID: attempt.providerID) }
                ?? ProblemCatalog.problem(code: .paymentFailed, detail: "\(attempt.providerID) answered \(result.status.rawValue) to \(operation.rawValue)")
            try await release("\(problem.code): \(problem.detail)")
            throw problem
        case .notSent(let reason) where !retry, .invalidRequest(let reason) where !retry:
            try await release("not sent: \(reason)")
            if case .invalidRequest = reply {
                throw ProblemCatalog.problem(code: .invalidRequest, detail: "\(attempt.providerID) refused the \(operation.rawValue): \(reason); nothing was sent")
            }
            throw ProblemCatalog.problem(code: .providerError, detail: "\(attempt.providerID): \(reason); nothing was sent", retryable: true)
        case .notSent(let reason), .invalidRequest(let reason), .unknown(let reason):
            let why = if case .unknown = reply { "outcome unknown: \(reason)" } else { "an earlier try's outcome is unknown; this try sent nothing: \(reason)" }
            try await keepHeld(why, event: .unknown, detail: reason)
            throw ProblemCatalog.problem(
                code: .outcomeUnknown,
                detail: "\(attempt.providerID): \(reason). Its amount stays held until it is settled; retry with the same idempotency key: the provider receives the same key and cannot apply it twice")
        }
    }

    /// Reconciliation's step for a payment with held operations: each one due
    /// is sent again, the same operation under the same provider key (the
    /// provider cannot apply it twice), and its answer settles it. A settled
    /// success becomes the answer of the caller's idempotency key. Returns
    /// how many were settled.
    @discardableResult
    func settleHeld(_ ref: AttemptRef) async throws -> Int {
        try await locks.withLock(ref.sessionID) {
            var settled = 0
            var session = try await self.load(ref.sessionID)
            guard let balance = (try session.attempt(ref.attemptID)).balance else { return 0 }
            let at = self.now()
            for (providerKey, held) in balance.inFlight.sorted(by: { $0.key < $1.key }) where (held.nextCheckAt ?? .distantPast) <= at {
                let operation = held.operation
                // Only a capture, refund or void holds money; a document saying otherwise is not acted on.
                guard operation == .capture || operation == .refund || operation == .void else {
                    self.logger.error("payment \(ref.attemptID) holds a \(operation.rawValue) under \(providerKey), which moves no money: left for a person")
                    continue
                }
                let attempt = try session.attempt(ref.attemptID)
                var scope: IdempotencyScope?
                if let requestKey = held.requestKey, let bound = try await self.store.answer(forKey: requestKey), bound.body == nil {
                    scope = IdempotencyScope(key: requestKey, fingerprint: bound.fingerprint, bound: bound)
                }
                var counted = held
                counted.checks += 1
                try session.hold(counted, key: providerKey, of: ref.attemptID)
                guard let provider = self.directory.provider(attempt.providerID) else {
                    // Not loaded now: rescheduled, never dropped.
                    counted.nextCheckAt = at.addingTimeInterval(self.configuration.backoff(after: counted.checks))
                    counted.reason = "waiting for \(attempt.providerID) to be loaded again"
                    try session.hold(counted, key: providerKey, of: ref.attemptID)
                    session = try await self.commit(session, events: [])
                    continue
                }
                // A reversal refused before may have been made meanwhile (a refund
                // the provider refused as already done, an authorization voided
                // since): the provider's totals settle it, instead of sending it
                // again forever.
                let reply: ProviderReply
                if let done = await self.reversalAlreadyMade(operation, held: counted, providerKey: providerKey, attempt: attempt,
                                                             balance: try session.paymentBalance(ref.attemptID), provider: provider) {
                    reply = done
                } else {
                    reply = await provider.perform(try self.call(operation, paymentID: ref.attemptID, providerKey: providerKey, held: counted, session: session))
                    self.record(reply, for: attempt.providerID)
                }
                do {
                    _ = try await self.settle(reply, operation: operation, providerKey: providerKey, retry: true, session: &session,
                                              paymentID: ref.attemptID, key: scope)
                    settled += 1
                } catch let problem as Problem where problem.code != .outcomeUnknown {
                    settled += 1  // settled as not done: the hold is released
                }
            }
            return settled
        }
    }

    /// For a reversal (``lateChargeReversal``) sent and refused before: a
    /// verify, and when the provider's totals show it made (voided; refunded
    /// by the held amount more than the books say), that answer as a
    /// success, which settles the hold. Nil: send it again.
    private func reversalAlreadyMade(_ operation: PaymentOperation, held: PaymentBalance.InFlight, providerKey: String, attempt: Attempt,
                                     balance: PaymentBalance, provider: any PaymentProvider) async -> ProviderReply? {
        guard providerKey.hasSuffix(Self.lateChargeReversal), held.reason?.hasPrefix("refused") == true else { return nil }
        let verified = await provider.perform(.verify(VerifyRequest(paymentId: attempt.id, providerReference: attempt.providerReference)))
        record(verified, for: attempt.providerID)
        guard case .answered(let state) = verified, let totals = state.totals else { return nil }
        let made = operation == .void ? totals.voided : totals.refunded.value >= balance.refunded + held.amount
        guard made else { return nil }
        logger.notice("the \(operation.rawValue) reversing payment \(attempt.id) is made at \(attempt.providerID) (its totals say so): settled")
        return .answered(AdapterResult(status: .succeeded, providerReference: state.providerReference,
                                       amount: operation == .void ? nil : Money(value: held.amount, currency: balance.authorized.currency),
                                       providerStatus: state.providerStatus))
    }

    private func paymentEvent(_ type: SessionEvent.Kind, session: Session, attempt: Attempt, amount: Money?, at: Date,
                              detail: String? = nil) -> SessionEvent {
        SessionEvent(sessionID: session.id, at: at, type: type, attemptID: attempt.id, status: attempt.status.rawValue,
                     providerID: attempt.providerID, amount: amount, detail: detail)
    }

    /// Until when an operation sent now is its engine's: its provider's call
    /// timeout plus the lease margin.
    func leaseEnd(_ providerID: String, from at: Date) -> Date {
        let timeout = (profile(providerID)?.callTimeout ?? .seconds(30)).components
        return at.addingTimeInterval(Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18 + configuration.leaseMargin)
    }
}
