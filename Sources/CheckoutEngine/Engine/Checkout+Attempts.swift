import Foundation
import GatewayPayloads
import PaymentFields

extension Checkout {
    /// Tries to pay session `id` with `request.method`.
    ///
    /// Routes to the candidates in priority order. Each try is a new attempt,
    /// committed as `processing` before its provider is called. The next
    /// candidate is tried only when this one provably did not charge; any
    /// other answer (success, a real decline, a payer action, an unknown
    /// outcome) is the answer.
    ///
    /// Under an idempotency key, a retry of the same request whose first try
    /// has no answer yet returns that try's attempt as it now is (and, once
    /// it is final, records it as the key's answer) instead of starting
    /// another; only when every earlier try provably sent nothing does it run
    /// again.
    public func attempt(session id: String, _ request: NewAttempt, idempotencyKey: String? = nil,
                        mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await guarded {
            let sessionMode = try await self.mode(ofSession: id, caller: mode)
            return try await idempotency.run(idempotencyKey, mode: sessionMode, operation: "attempt", target: id, request: request) { key in
                try await self.locks.withLock(id) {
                    if let key, let earlier = key.bound?.reference {
                        return try await self.resumeAttempt(id, attempt: earlier, key)
                    }
                    return try await self.runAttempt(id, request, key)
                }
            }
        }
    }

    /// The attempt an earlier try under `key` started, as it now is; once it
    /// is final it becomes the key's answer.
    private func resumeAttempt(_ id: String, attempt attemptID: String, _ key: IdempotencyScope) async throws -> Attempt {
        let session = try await load(id)
        let attempt = try session.attempt(attemptID)
        if attempt.status.isFinal {
            _ = try await store.commit(StoreChange(session: nil, events: [], answer: key.answer(attempt, reference: attemptID, at: now())))
        }
        return attempt
    }

    /// Feeds a pending attempt what the payer did (an OTP, the parameters of a
    /// return from a redirect or 3-D Secure).
    public func proceed(session id: String, attempt attemptID: String, _ input: PayerInput,
                        idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await guarded {
            let sessionMode = try await self.mode(ofSession: id, caller: mode)
            return try await idempotency.run(idempotencyKey, mode: sessionMode, operation: "continue", target: "\(id)/\(attemptID)", request: input) { key in
                try await self.locks.withLock(id) {
                    var session = try await self.load(id)
                    let attempt: Attempt
                    attempt = try session.attempt(attemptID)
                    guard attempt.status == .pending else {
                        throw ProblemCatalog.problem(code: .invalidState, detail: "attempt \(attemptID) is \(attempt.status.rawValue); only a pending attempt can continue")
                    }
                    guard let reference = attempt.providerReference else {
                        throw ProblemCatalog.problem(code: .invalidState, detail: "attempt \(attemptID) has no provider reference yet; it is being verified", retryable: true)
                    }
                    let provider = try self.provider(attempt.providerID)
                    if let key, key.bound == nil {
                        // The key is bound to this input before the provider hears of it.
                        _ = try await self.store.commit(StoreChange(session: nil, events: [], answer: key.intent(reference: attemptID, at: self.now())))
                    }
                    let request = ContinueRequest(
                        paymentId: attemptID, idempotencyKey: key?.providerKey("continue", of: attemptID) ?? Identifiers.make("cont"),
                        providerReference: reference, otp: input.otp, returnParams: input.returnParams)
                    let reply = await provider.perform(.proceed(request))
                    self.record(reply, for: attempt.providerID)
                    let at = self.now()
                    var events: [SessionEvent]
                    switch reply {
                    case .answered(let result):
                        events = try await self.apply(result, to: &session, attempt: attemptID, at: at)
                    case .notSent(let reason):
                        throw ProblemCatalog.problem(code: .providerError, detail: "\(attempt.providerID): \(reason); nothing was sent", retryable: true)
                    case .invalidRequest(let reason):
                        throw ProblemCatalog.problem(code: .invalidRequest, detail: "\(attempt.providerID) refused the request: \(reason); nothing was sent")
                    case .unknown(let reason):
                        events = self.markUnknown(&session, attempt: attemptID, reason: reason, at: at)
                    }
                    let updated = try session.attempt(attemptID)
                    // An outcome not known yet is no answer: a retry asks the provider again, under the same key.
                    let known = if case .unknown = reply { false } else { true }
                    session = try await self.commit(session, events: events, answer: known ? key?.answer(updated, reference: attemptID, at: at) : nil)
                    return updated
                }
            }
        }
    }

    /// Starts the session's next attempt. From the engine's cached copy of the
    /// session when it has one, without asking the store whether it is still
    /// current: nothing reaches a provider before this attempt's first commit
    /// (`attempt.started`), and that commit's version check refuses a copy
    /// another process has changed. Whatever stops it before a provider is
    /// called is tried once more from the store's copy.
    private func runAttempt(_ id: String, _ request: NewAttempt, _ key: IdempotencyScope?) async throws -> Attempt {
        if let cached = sessions.get(id) {
            var called = false
            do {
                return try await runAttempt(id, request, key, session: cached, called: &called)
            } catch where !called {
                sessions.remove(id)
            }
        }
        var called = false
        return try await runAttempt(id, request, key, session: try await load(id), called: &called)
    }

    /// - Parameter called: set once a provider has been called.
    private func runAttempt(_ id: String, _ request: NewAttempt, _ key: IdempotencyScope?, session initial: Session,
                            called: inout Bool) async throws -> Attempt {
        var session = initial
        let at = now()
        if session.status == .open, session.liveAttempt == nil, session.expiresAt <= at {
            try await expireNow(&session, at: at)
        }
        try session.checkCanStartAttempt()
        var route = try route(request, in: session, at: at)
        var failedBefore: String?
        for (index, candidate) in route.candidates.enumerated() {
            guard let provider = directory.provider(candidate.providerID), breakers.allow(candidate.providerID) else {
                route.skipped.append("\(candidate.providerID): not reachable now")
                continue
            }
            let attemptID = try await start(candidate, request, in: &session, after: failedBefore, key: key)
            called = true
            let reply = await provider.perform(.authorize(AuthorizeRequest(
                paymentId: attemptID, idempotencyKey: attemptID, amount: session.amount, method: request.method,
                country: session.country, orderId: session.orderID, capture: session.capture,
                instrument: route.instrument, payer: session.payer, returnUrl: session.returnURL)))
            record(reply, for: candidate.providerID)
            let answeredAt = now()
            let asked = session
            let isLast = index == route.candidates.count - 1
            // The store refuses a reference another payment holds; its holder
            // is looked for only then (see `apply`).
            var (events, failover) = try await applyAuthorize(reply, to: &session, attempt: attemptID, of: candidate.providerID,
                                                              last: isLast, at: answeredAt, lookingForHolder: false)
            var final = try session.attempt(attemptID)
            if let failover {
                failedBefore = failover
                events.append(SessionEvent(sessionID: id, at: answeredAt, type: .attemptFailover, attemptID: attemptID,
                                           status: final.status.rawValue, providerID: candidate.providerID, detail: failover))
                // Nothing live under the key now: this try provably charged nothing.
                session = try await commit(session, events: events, answer: key?.intent(reference: nil, at: answeredAt))
                continue
            }
            // A live attempt (pending, an action to take) is no answer yet: a
            // retry under the key returns it as it then is.
            do {
                session = try await commit(session, events: events, answer: final.status.isFinal ? key?.answer(final, reference: attemptID, at: answeredAt) : nil)
            } catch StoreConflict.referenceHeld {
                // Another payment of this provider holds the reference the
                // answer named, and nothing was written: the answer applied
                // again, with the holder looked for, is a protocol violation.
                session = asked
                (events, _) = try await applyAuthorize(reply, to: &session, attempt: attemptID, of: candidate.providerID,
                                                       last: isLast, at: answeredAt, lookingForHolder: true)
                final = try session.attempt(attemptID)
                session = try await commit(session, events: events, answer: final.status.isFinal ? key?.answer(final, reference: attemptID, at: answeredAt) : nil)
            }
            return final
        }
        let reasons = route.skipped.isEmpty ? "" : " (" + route.skipped.joined(separator: "; ") + ")"
        throw ProblemCatalog.problem(
            code: .methodUnavailable,
            detail: "no \(session.mode.rawValue) provider can take \(request.method) for \(session.amount.value) \(session.amount.currency)"
                + (session.country.map { " in \($0)" } ?? "") + " (a \(session.mode.rawValue) session is only ever served by \(session.mode.rawValue) providers)" + reasons)
    }

    /// Where an attempt may go: its candidates in order, the providers left
    /// out and why, and the instrument each is sent.
    private struct AttemptRoute {
        var candidates: [RoutingDecision.Candidate]
        var skipped: [String]
        var instrument: [String: JSONValue]?
    }

    /// Routes `request` and checks its instrument against the method's form
    /// (the first candidate's, a pinned provider's own) before any provider
    /// is called (docs/fields.md). A chosen instrument pins its provider: its
    /// reference means nothing elsewhere.
    private func route(_ request: NewAttempt, in session: Session, at: Date) throws -> AttemptRoute {
        let selection = try selection(request, in: session)
        let clock = ContinuousClock.now
        let profiles = directory.profiles()
        var decision = Router.route(
            mode: session.mode, method: request.method, amount: session.amount, country: session.country, capture: session.capture,
            pinnedProvider: selection?.provider ?? request.provider, profiles: profiles, breakerState: { self.breakers.state(of: $0, at: clock) })
        let first = decision.candidates.first?.providerID
        let form = profiles.first { $0.id == first }?.fields[request.method] ?? []
        let issues = FieldValidation.validate(instrument: request.instrument, against: form, presentOnly: selection != nil, now: at)
        if !issues.isEmpty { throw ProblemCatalog.invalidFields(issues, method: request.method, path: "instrument.") }
        var instrument = request.instrument
        if let selection {
            instrument = (instrument ?? [:]).merging([SelectedInstrument.member: selection.selected.jsonValue]) { $1 }
            for index in decision.candidates.indices { decision.candidates[index].reason = "the provider that offered the chosen instrument" }
        }
        return AttemptRoute(candidates: decision.candidates, skipped: decision.excluded.map { "\($0.providerID): \($0.reason)" },
                            instrument: instrument)
    }

    /// Starts an attempt with `candidate`: committed `processing`, with its
    /// lease, and the key bound to this request naming it, before the
    /// provider hears of it. A refused commit gives the probe slot back.
    private func start(_ candidate: RoutingDecision.Candidate, _ request: NewAttempt, in session: inout Session, after failedBefore: String?,
                       key: IdempotencyScope?) async throws -> String {
        let at = now()
        let attemptID = Identifiers.make("att")
        var attempt = Attempt(
            id: attemptID, method: request.method, providerID: candidate.providerID,
            routingReason: candidate.reason + (failedBefore.map { "; after \($0)" } ?? ""), requested: session.amount, at: at)
        let timeout = candidate.callTimeout.components
        attempt.leaseUntil = at.addingTimeInterval(Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18 + configuration.leaseMargin)
        try session.start(attempt)
        let started = SessionEvent(sessionID: session.id, at: at, type: .attemptStarted, attemptID: attemptID,
                                   status: AttemptStatus.processing.rawValue, providerID: candidate.providerID,
                                   amount: session.amount, detail: attempt.routingReason)
        do {
            session = try await commit(session, events: [started], answer: key?.intent(reference: attemptID, at: at))
        } catch let conflict as StoreConflict {
            breakers.releaseProbe(candidate.providerID)
            throw IntentRefused(conflict: conflict)
        } catch {
            breakers.releaseProbe(candidate.providerID)
            throw error
        }
        return attemptID
    }

    /// Applies one candidate's authorize reply to its attempt: the events,
    /// and why the next candidate may be tried (nil when it may not: only a
    /// reply that proves nothing was charged fails over, never an unknown
    /// outcome, and never from the last candidate).
    private func applyAuthorize(_ reply: ProviderReply, to session: inout Session, attempt attemptID: String, of providerID: String,
                                last isLast: Bool, at: Date, lookingForHolder: Bool) async throws -> (events: [SessionEvent], failover: String?) {
        switch reply {
        case .answered(let result):
            let events = try await apply(result, to: &session, attempt: attemptID, at: at, lookingForHolder: lookingForHolder)
            // Failed as applied: an answer kept pending (absence not yet final) never fails over.
            guard !isLast, (try? session.attempt(attemptID))?.status == .failed, result.problem?.safeToRetryElsewhere == true else {
                return (events, nil)
            }
            return (events, "\(providerID) declined before charging (\(result.problem?.code.rawValue ?? "failed"))")
        case .notSent(let reason):
            let problem = ProblemCatalog.problem(code: .providerError, detail: "\(providerID): \(reason); nothing was sent", retryable: true)
            return (fail(&session, attempt: attemptID, problem: problem, at: at), isLast ? nil : "\(providerID) was not reached (\(reason))")
        case .invalidRequest(let reason):
            // The request itself is wrong: every provider would be sent the same.
            let problem = ProblemCatalog.problem(code: .invalidRequest, detail: "\(providerID) refused the request: \(reason); nothing was sent")
            return (fail(&session, attempt: attemptID, problem: problem, at: at), nil)
        case .unknown(let reason):
            return (markUnknown(&session, attempt: attemptID, reason: reason, at: at), nil)
        }
    }

    /// Applies a provider's answer to a live attempt; returns the events.
    /// An answer for an attempt that is already final changes nothing (it is
    /// recorded: a late or contradicting answer is something to look at).
    ///
    /// One provider reference is one payment: an answer (not a failure)
    /// naming a reference another attempt of the same provider holds is a
    /// protocol violation. Its outcome is unknown (whatever it claims, the
    /// money may have moved under either payment): the attempt stays live,
    /// without that reference, for reconciliation and a person, and is never
    /// recorded `succeeded` a second time. The store refuses the same
    /// (``StoreConflict/referenceHeld(provider:reference:)``) for two answers
    /// racing past this check: that commit fails, and the attempt, left as
    /// it was, is verified again and meets this check.
    ///
    /// - Parameter lookingForHolder: false skips the read of who holds the
    ///   reference, for a caller that commits the result and, if the store
    ///   refuses it as held, applies the answer again with the read (an
    ///   authorize: one point read less for every payment).
    func apply(_ result: AdapterResult, to session: inout Session, attempt attemptID: String, at: Date,
               lookingForHolder: Bool = true) async throws -> [SessionEvent] {
        guard let attempt = try? session.attempt(attemptID) else { return [] }
        let sessionID = session.id
        let providerID = attempt.providerID
        func event(_ type: SessionEvent.Kind, _ status: String, amount: Money? = nil, detail: String? = nil) -> SessionEvent {
            SessionEvent(sessionID: sessionID, at: at, type: type, attemptID: attemptID, status: status, providerID: providerID,
                         amount: amount, detail: detail)
        }
        let statusNote = result.providerStatus.map { "provider status \($0)" }
        if attempt.status == .failed || attempt.status == .cancelled, result.status == .succeeded || result.status == .authorized {
            return try await lateCharge(result, to: &session, attempt: attempt, at: at)
        }
        guard !attempt.status.isFinal else {
            let agrees = result.status.rawValue == attempt.status.rawValue || Self.booksExplain(result.status, of: attempt)
            var events = [event(agrees ? .attemptConfirmed : .attemptDiscrepancy, attempt.status.rawValue,
                                detail: "the provider reports \(result.status.rawValue)" + (statusNote.map { "; \($0)" } ?? ""))]
            // With nothing held, the provider's totals must be the books'.
            if let totals = result.totals, let balance = attempt.balance, balance.inFlight.isEmpty,
               totals.captured.value != balance.captured || totals.refunded.value != balance.refunded || totals.voided != balance.voided {
                events.append(event(.paymentDiscrepancy, attempt.status.rawValue, detail:
                    "the provider holds captured \(totals.captured.value), refunded \(totals.refunded.value), voided \(totals.voided); "
                    + "the books say captured \(balance.captured), refunded \(balance.refunded), voided \(balance.voided)"))
            }
            return events
        }
        if lookingForHolder, result.status != .failed, result.status != .cancelled, let reference = result.providerReference,
           reference != attempt.providerReference, let holder = try await paymentHolding(reference, of: providerID, besides: attemptID) {
            logger.error("protocol violation: \(providerID) answered attempt \(attemptID) \(result.status.rawValue) with provider reference \(reference), which attempt \(holder) holds; the outcome is unknown and is reconciled")
            return markUnknown(&session, attempt: attemptID, reason: "protocol violation: \(providerID) answered \(result.status.rawValue) with provider reference \(reference), "
                               + "which payment \(holder) holds", at: at, event: .attemptProtocolViolation, code: .providerError)
        }
        try? session.update(attempt: attemptID) { a in
            if let reference = result.providerReference { a.providerReference = reference }
            if let providerStatus = result.providerStatus { a.providerStatus = providerStatus }
            a.updatedAt = at
        }
        switch result.status {
        case .succeeded, .authorized:
            let next: AttemptStatus = result.status == .succeeded ? .succeeded : .authorized
            let approved = result.amount ?? attempt.requested
            guard approved.value <= attempt.requested.value else {
                return markUnknown(&session, attempt: attemptID, reason: "\(providerID) reports \(approved.value) approved, more than the \(attempt.requested.value) asked", at: at)
            }
            // A session another attempt paid meanwhile (a late charge recorded while this one was live).
            let paidBy = session.payment.map(\.id)
            do {
                try session.move(attempt: attemptID, to: next, approved: approved)
            } catch {
                // An answer the domain cannot accept (another currency, a zero
                // amount) is a provider fault: the money may have moved, so the
                // attempt is left for a person and for reconciliation.
                return markUnknown(&session, attempt: attemptID, reason: "unusable \(result.status.rawValue) answer: \(error)", at: at)
            }
            try? session.update(attempt: attemptID) { $0.problem = nil }
            var events = [event(next == .succeeded ? .attemptSucceeded : .attemptAuthorized, next.rawValue, amount: approved, detail: statusNote)]
            if approved.value < attempt.requested.value {
                events[0].detail = "partial approval: \(approved.value) of \(attempt.requested.value)" + (statusNote.map { "; \($0)" } ?? "")
            }
            if let paidBy, paidBy != attemptID {
                // One payment per session: this second one is reversed.
                events += try holdReversal(of: attemptID, in: &session, as: next, approved: approved, why: "payment \(paidBy) paid the session first", at: at)
                return events
            }
            events.append(SessionEvent(sessionID: sessionID, at: at, type: .sessionCompleted, attemptID: attemptID,
                                       status: SessionStatus.completed.rawValue, providerID: providerID, amount: approved))
            return events
        case .pending:
            try? session.move(attempt: attemptID, to: .pending)
            let checks = attempt.checks
            try? session.update(attempt: attemptID) { a in
                // A verify that says "still pending" without an action leaves the payer's action in place.
                if let action = result.action { a.action = action.withWireDates }
                a.problem = result.problem.map { ProblemCatalog.problem(from: $0, providerID: providerID) }
                a.leaseUntil = nil
                a.nextCheckAt = at.addingTimeInterval(self.configuration.backoff(after: checks))
            }
            let detail = result.action.map { "payer action: \($0.type.rawValue)" } ?? result.problem.map { "\($0.code): \($0.message)" } ?? statusNote
            return [event(.attemptPending, "pending", detail: detail)]
        case .failed where result.problem?.code == .unknownPayment:
            // Absence is not proof: the provider may act on a request it has not recorded yet.
            let window = profile(providerID)?.absenceWindow ?? ProviderProfile.defaultAbsenceWindow
            let until = attempt.createdAt.addingTimeInterval(window)
            guard at < until else { fallthrough }
            var events = markUnknown(&session, attempt: attemptID, reason: "\(providerID) has no record of it yet, and may still act on it until \(until) "
                                     + "(its absence_window_s of \(Int(window))); only then is its absence final", at: at)
            try? session.update(attempt: attemptID) { a in
                if let next = a.nextCheckAt, next > until { a.nextCheckAt = until }
            }
            events = events.map { event in var event = event; event.type = .attemptNotFoundYet; return event }
            return events
        case .failed, .cancelled:
            let code: ProblemCode = result.status == .cancelled ? .userCancelled : .paymentFailed
            let problem = result.problem.map { ProblemCatalog.problem(from: $0, providerID: providerID) }
                ?? ProblemCatalog.problem(code: code, detail: "\(providerID) reported \(result.status.rawValue) without a reason")
            return fail(&session, attempt: attemptID, problem: problem, cancelled: result.status == .cancelled, at: at)
        }
    }

    /// A charge the provider reports on an attempt recorded failed or
    /// cancelled: it acted on a request the host had given up on (a verify
    /// that found nothing before the provider recorded it, a decline it
    /// reversed). Never only logged:
    /// - the session unpaid (open, or expired): the attempt becomes the
    ///   payment and the session completes;
    /// - paid by another attempt, or aborted by the merchant: the charge is
    ///   recorded as the payment it is, and its reversal (a void of an
    ///   authorization, a refund of a charge) is held under its own provider
    ///   key, due at once: reconciliation sends it, again until settled,
    ///   like any held operation, and the events say so. A refusal does not
    ///   release it (the payer's money): it is sent again, logged each time.
    /// A charge that cannot be applied (another currency, more than was
    /// asked, a reference another payment holds) is recorded and logged
    /// for a person, as any answer the domain cannot take.
    func lateCharge(_ result: AdapterResult, to session: inout Session, attempt: Attempt, at: Date) async throws -> [SessionEvent] {
        let providerID = attempt.providerID
        let sessionID = session.id
        func event(_ type: SessionEvent.Kind, _ status: String, amount: Money? = nil, detail: String?) -> SessionEvent {
            SessionEvent(sessionID: sessionID, at: at, type: type, attemptID: attempt.id, status: status, providerID: providerID, amount: amount, detail: detail)
        }
        let approved = result.amount ?? attempt.requested
        var unusable: String?
        if approved.currency != attempt.requested.currency || approved.value <= 0 || approved.value > attempt.requested.value {
            unusable = "\(approved.value) \(approved.currency) for \(attempt.requested.value) \(attempt.requested.currency) asked"
        } else if let reference = result.providerReference ?? attempt.providerReference,
                  let holder = try await paymentHolding(reference, of: providerID, besides: attempt.id) {
            // The reference it would hold again as a payment (a failed attempt's holds nothing in the store).
            unusable = "provider reference \(reference), which payment \(holder) holds"
        }
        if let unusable {
            logger.error("\(providerID) reports \(result.status.rawValue) on attempt \(attempt.id), recorded \(attempt.status.rawValue), with \(unusable): not applied; look at it")
            return [event(.attemptDiscrepancy, attempt.status.rawValue, detail: "the provider reports \(result.status.rawValue) with \(unusable): not applied")]
        }
        let next: AttemptStatus = result.status == .succeeded ? .succeeded : .authorized
        let completes = try session.recordLateCharge(attempt: attempt.id, as: next, approved: approved)
        try session.update(attempt: attempt.id) { a in
            if let reference = result.providerReference { a.providerReference = reference }
            if let status = result.providerStatus { a.providerStatus = status }
            a.updatedAt = at
        }
        var events = [event(.attemptLateCharge, next.rawValue, amount: approved,
                            detail: "\(providerID) reports \(next.rawValue) on an attempt recorded \(attempt.status.rawValue): it acted after the host gave up")]
        if completes {
            logger.warning("\(providerID) charged attempt \(attempt.id) after it was recorded \(attempt.status.rawValue): it is session \(sessionID)'s payment")
            events.append(SessionEvent(sessionID: sessionID, at: at, type: .sessionCompleted, attemptID: attempt.id,
                                       status: SessionStatus.completed.rawValue, providerID: providerID, amount: approved))
            return events
        }
        let why = session.status == .cancelled ? "the merchant aborted the session" : "another payment paid the session"
        logger.warning("\(providerID) charged attempt \(attempt.id) after it was recorded \(attempt.status.rawValue), and \(why)")
        return events + (try holdReversal(of: attempt.id, in: &session, as: next, approved: approved, why: why, at: at))
    }

    /// Holds the reversal of payment `attemptID` (a void of an
    /// authorization, a refund of a charge, of all of it) under
    /// `<attempt>:late-charge-reversal`, due at once: a payment the session
    /// must not keep (another paid it, or it was aborted). Reconciliation
    /// sends it until it lands.
    func holdReversal(of attemptID: String, in session: inout Session, as status: AttemptStatus, approved: Money, why: String,
                      at: Date) throws -> [SessionEvent] {
        let operation: PaymentOperation = status == .authorized ? .void : .refund
        let held = PaymentBalance.InFlight(operation: operation, amount: approved.value,
                                           reason: "reversing a payment the session does not keep: \(why)", since: at, nextCheckAt: at, checks: 0)
        try session.hold(held, key: attemptID + Self.lateChargeReversal, of: attemptID)
        let providerID = (try? session.attempt(attemptID))?.providerID
        logger.warning("payment \(attemptID) of session \(session.id) is reversed (\(why)): its \(operation.rawValue) is held for reconciliation")
        return [SessionEvent(sessionID: session.id, at: at, type: .held(operation, .held), attemptID: attemptID, status: status.rawValue,
                             providerID: providerID, amount: approved,
                             detail: "reversed (\(why)): reconciliation sends the \(operation.rawValue) until it is settled")]
    }

    /// The end of the provider key a late charge's reversal is held under
    /// (`<attempt>:late-charge-reversal`): one per payment, however often sent.
    static let lateChargeReversal = ":late-charge-reversal"

    /// Whether a provider's status for a final attempt that differs from the
    /// attempt's is what its books say it should now be (the header's verify):
    /// an authorization fully captured is `succeeded`, a voided one
    /// `cancelled`, while the attempt itself stays `authorized` (its balance
    /// records the movements).
    static func booksExplain(_ reported: PaymentStatus, of attempt: Attempt) -> Bool {
        guard attempt.status == .authorized, let balance = attempt.balance else { return false }
        switch reported {
        case .succeeded: return !balance.voided && balance.captured > 0 && balance.captured >= balance.authorized.value
        case .cancelled: return balance.voided && balance.captured == 0
        default: return false
        }
    }

    func fail(_ session: inout Session, attempt attemptID: String, problem: Problem, cancelled: Bool = false, at: Date) -> [SessionEvent] {
        let status: AttemptStatus = cancelled ? .cancelled : .failed
        guard (try? session.move(attempt: attemptID, to: status)) != nil else { return [] }
        try? session.update(attempt: attemptID) { a in
            a.problem = problem
            a.updatedAt = at
        }
        let providerID = (try? session.attempt(attemptID))?.providerID
        return [SessionEvent(sessionID: session.id, at: at, type: cancelled ? .attemptCancelled : .attemptFailed, attemptID: attemptID,
                             status: status.rawValue, providerID: providerID, detail: "\(problem.code): \(problem.detail)")]
    }

    /// The provider may or may not have acted: the attempt waits, pending,
    /// for a verify. Never retried elsewhere.
    func markUnknown(_ session: inout Session, attempt attemptID: String, reason: String, at: Date,
                     event type: SessionEvent.Kind = .attemptPending, code: ProblemCode = .networkError) -> [SessionEvent] {
        guard let attempt = try? session.attempt(attemptID), !attempt.status.isFinal else { return [] }
        if attempt.status == .processing { try? session.move(attempt: attemptID, to: .pending) }
        let checks = attempt.checks
        try? session.update(attempt: attemptID) { a in
            a.leaseUntil = nil
            a.updatedAt = at
            a.nextCheckAt = at.addingTimeInterval(self.configuration.backoff(after: checks))
            if a.action == nil {
                a.problem = ProblemCatalog.problem(code: code, detail: "\(a.providerID): \(reason); the outcome is being verified")
            }
        }
        return [SessionEvent(sessionID: session.id, at: at, type: type, attemptID: attemptID, status: "pending",
                             providerID: attempt.providerID, detail: "outcome unknown: \(reason)")]
    }

    /// Provider `id`'s profile as routing has it now (enabled or not); nil when none is loaded.
    func profile(_ id: String) -> ProviderProfile? {
        directory.profiles().first { $0.id == id }
    }

    /// The attempt other than `attemptID` that holds `reference` at
    /// `provider` in the store (one reference is one payment), if any.
    func paymentHolding(_ reference: String, of provider: String, besides attemptID: String) async throws -> String? {
        guard let holder = try await store.attempt(ofProvider: provider, holding: reference), holder != attemptID else { return nil }
        return holder
    }

    func provider(_ id: String) throws -> any PaymentProvider {
        guard let provider = directory.provider(id) else {
            throw ProblemCatalog.problem(code: .providerError, detail: "provider \(id) is not loaded", retryable: true)
        }
        return provider
    }

    func expireNow(_ session: inout Session, at: Date) async throws {
        try session.expire()
        session.updatedAt = at
        let event = SessionEvent(sessionID: session.id, at: at, type: .sessionExpired, status: SessionStatus.expired.rawValue,
                                 detail: "unpaid past its deadline")
        session = try await commit(session, events: [event])
    }

    // MARK: Circuit breakers

    /// A provider that answered works (a decline included), unless the answer
    /// is its own failure; no answer is a failure.
    func record(_ reply: ProviderReply, for providerID: String) {
        let healthy: Bool = switch reply {
        case .answered(let result): result.problem?.code != .providerError
        case .invalidRequest: true
        case .notSent, .unknown: false
        }
        breakers.record(healthy: healthy, for: providerID)
    }

    /// Each provider's circuit, for operations views.
    public func circuitStates() -> [String: CircuitBreaker.State] {
        breakers.states()
    }
}
