import Foundation
import GatewayPayloads

extension Checkout {
    /// Asks the provider where attempt `attemptID` stands and applies the
    /// answer when the attempt is still live. A final attempt never changes;
    /// the provider's view is recorded (`attempt.confirmed` or `attempt.discrepancy`).
    public func verify(attempt attemptID: String, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await guarded {
            let sessionID = try await sessionID(ofAttempt: attemptID)
            _ = try await self.mode(ofSession: sessionID, caller: mode)
            return try await locks.withLock(sessionID) {
                try await self.verifyLocked(AttemptRef(sessionID: sessionID, attemptID: attemptID), explicit: true)
            }
        }
    }

    /// Reconciliation's step for one due attempt (see ``Reconciler``): a live
    /// attempt is verified; a payment's held operations are settled.
    func reconcile(_ ref: AttemptRef) async throws {
        let attempt = try await locks.withLock(ref.sessionID) {
            try await self.verifyLocked(ref, explicit: false)
        }
        if attempt.status.isFinal, attempt.balance?.inFlight.isEmpty == false {
            try await settleHeld(ref)
        }
    }

    private func verifyLocked(_ ref: AttemptRef, explicit: Bool) async throws -> Attempt {
        var session = try await load(ref.sessionID)
        var attempt = try session.attempt(ref.attemptID)
        var at = now()
        var events: [SessionEvent] = []
        if attempt.status == .processing {
            if let lease = attempt.leaseUntil, lease > at {
                // Its engine is still waiting for the provider's answer.
                if explicit {
                    throw ProblemCatalog.problem(code: .invalidState, detail: "attempt \(ref.attemptID) is still being processed; verify after \(lease)", retryable: true)
                }
                return attempt
            }
            // The engine that sent it stopped (a crash) before recording an answer.
            events += markUnknown(&session, attempt: ref.attemptID, reason: "its engine stopped before the provider's answer was recorded",
                                  at: at, event: .attemptInterrupted)
            attempt = try session.attempt(ref.attemptID)
        }
        if !explicit, attempt.status.isFinal { return attempt }
        // A provider that is no longer loaded cannot verify: the attempt is
        // rescheduled (never dropped, never blocking the queue) until it is back.
        let reply: ProviderReply
        if let provider = directory.provider(attempt.providerID) {
            reply = await provider.perform(.verify(VerifyRequest(paymentId: attempt.id, providerReference: attempt.providerReference)))
            record(reply, for: attempt.providerID)
        } else {
            reply = .notSent("provider \(attempt.providerID) is not loaded")
        }
        at = now()
        switch reply {
        case .answered(let result):
            events += try await apply(result, to: &session, attempt: ref.attemptID, at: at)
        case .notSent(let reason), .invalidRequest(let reason), .unknown(let reason):
            events.append(SessionEvent(sessionID: ref.sessionID, at: at, type: .attemptVerifyFailed, attemptID: ref.attemptID,
                                       status: attempt.status.rawValue, providerID: attempt.providerID, detail: reason))
        }
        let live = !(try session.attempt(ref.attemptID)).status.isFinal
        if live {
            let checks = attempt.checks + 1
            try? session.update(attempt: ref.attemptID) { a in
                a.checks = checks
                a.nextCheckAt = at.addingTimeInterval(self.configuration.backoff(after: checks))
            }
        }
        guard !events.isEmpty || live else { return attempt }
        session = try await commit(session, events: events)
        return try session.attempt(ref.attemptID)
    }

    /// Expires session `id` if it is open, unpaid, idle and past its deadline;
    /// returns whether it did.
    func expireIfDue(_ id: String) async throws -> Bool {
        try await locks.withLock(id) {
            var session = try await self.load(id)
            let at = self.now()
            guard session.status == .open, session.liveAttempt == nil, session.expiresAt <= at else { return false }
            try await self.expireNow(&session, at: at)
            return true
        }
    }

    /// Hands a provider's notification to its adapter; a verified one drives
    /// the same transitions as a verify, once per provider event id.
    ///
    /// A notification that cannot be looked up or recorded (the store
    /// unavailable or failing) is refused with the store's problem (a `503`
    /// when it is unavailable), never answered as ignored: a provider
    /// resends what was refused, and drops what was acknowledged.
    public func webhook(provider providerID: String, headers: [String: String], body: Data) async throws(Problem) -> WebhookOutcome {
        try await guarded {
            let provider = try self.provider(providerID)
            let request = WebhookRequest(headers: Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a }),
                                         body: body.base64EncodedString())
            guard let result = await provider.webhook(request), result.verified else {
                throw ProblemCatalog.problem(code: .webhookUnverified, detail: "\(providerID) could not verify this notification; nothing changed")
            }
            if let eventID = result.eventId, try await store.hasWebhook(provider: providerID, eventID: eventID) {
                return .duplicate
            }
            guard let paymentID = result.paymentId else {
                return .ignored("the notification names no payment")
            }
            guard let sessionID = try await store.sessionID(ofAttempt: paymentID) else {
                return .ignored("the notification names no payment this host made")
            }
            return try await locks.withLock(sessionID) {
                var session = try await self.load(sessionID)
                let attempt = try session.attempt(paymentID)
                guard attempt.providerID == providerID else {
                    return .ignored("payment \(paymentID) belongs to \(attempt.providerID), not \(providerID)")
                }
                let at = self.now()
                var events = [SessionEvent(sessionID: sessionID, at: at, type: .webhookReceived, attemptID: paymentID,
                                           status: result.status?.rawValue, providerID: providerID, amount: result.amount,
                                           detail: result.eventId.map { "event \($0)" })]
                if let status = result.status {
                    var answer = AdapterResult(status: status, providerReference: result.providerReference, amount: result.amount, problem: result.problem)
                    if attempt.status == .failed || attempt.status == .cancelled, status == .succeeded || status == .authorized {
                        // A late charge is acted on only as the provider's own verify
                        // states it: notifications may come out of order (an
                        // "authorized" delivered after the "cancelled" that voided it).
                        let reply = await provider.perform(.verify(VerifyRequest(paymentId: paymentID,
                                                                                 providerReference: attempt.providerReference ?? result.providerReference)))
                        self.record(reply, for: providerID)
                        guard case .answered(let confirmed) = reply else {
                            throw ProblemCatalog.problem(code: .providerError, detail: "\(providerID) reports a charge on \(paymentID), recorded \(attempt.status.rawValue), which its verify could not confirm now; the provider will resend", retryable: true)
                        }
                        answer = confirmed
                    }
                    events += try await self.apply(answer, to: &session, attempt: paymentID, at: at)
                }
                let stored: [SessionEvent]
                do {
                    stored = try await self.store.commit(StoreChange(session: session, events: events, webhook: result.eventId.map { (providerID, $0) }))
                } catch StoreConflict.duplicateWebhook {
                    return .duplicate
                } catch let conflict as StoreConflict {
                    throw ProblemCatalog.problem(code: .invalidState, detail: "\(conflict): changed concurrently; the provider will resend", retryable: true)
                } catch {
                    throw self.storeProblem(error)
                }
                self.hub.publish(stored)
                if !stored.isEmpty {
                    var after = session
                    after.version += 1
                    self.committed(after, stored)
                }
                return .applied(AttemptRef(sessionID: sessionID, attemptID: paymentID))
            }
        }
    }
}
