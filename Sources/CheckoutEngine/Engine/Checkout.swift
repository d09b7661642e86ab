import Crypto
import Foundation
import GatewayPayloads
import PaymentFields
import Logging
import Synchronization

/// The checkout engine: sessions, attempts with safe routing, payment
/// operations, verification and notifications, over a ``CheckoutStore`` and a
/// ``ProviderDirectory``.
///
/// Rules it keeps (tested in `CheckoutEngineTests`):
/// - An attempt is committed as `processing`, with a lease, *before* its
///   provider is called; every answer is committed before it is returned.
/// - Failover to the next candidate only when the attempt provably did not
///   charge (nothing sent, or a decline marked safe to retry elsewhere). An
///   unknown outcome leaves the attempt `pending` for reconciliation.
/// - Operations on one session run one at a time; sessions run in parallel.
/// - Under an idempotency key, a request runs once: concurrent duplicates wait
///   for it, later ones get the committed answer, another request is a conflict.
///   The key is bound to its request from the first try that reaches a
///   provider (committed with the intent, before the call), whatever became
///   of that try; a retry of the same request whose outcome is not known yet
///   settles or resumes it, and the provider receives the same key again.
/// - Test and live never mix: a session has the mode of the key that opened
///   it, and only providers of that mode serve it or back it up.
///
/// Every failure reaches the caller as a ``Problem``.
public final class Checkout: Sendable {
    let store: any CheckoutStore
    let directory: any ProviderDirectory
    let configuration: CheckoutConfiguration
    let logger: Logger
    let now: @Sendable () -> Date
    let hub = EventHub()
    let locks = SessionLocks()
    let sessions = SessionCache()
    /// What sessions are offered, per set of serving providers (``offer(for:)``).
    let offers = OfferCache()
    let breakers: CircuitBreakers
    /// Runs each mutating request once per idempotency key.
    let idempotency: IdempotentRuns
    let sealer: InstrumentSealer
    /// Relays other hosts' events to this host's readers, once started.
    let relay: EventRelay
    /// Told after each commit that recorded events: the session as the
    /// commit left it (its version bumped), and the events as stored.
    let committed: @Sendable (Session, [SessionEvent]) -> Void
    /// This engine's name among the hosts that share its store: what it
    /// claims due reconciliation work under (``Reconciler``).
    public let engineID = Identifiers.make("eng")

    /// - Parameter fingerprintKey: the secret that keys idempotency
    ///   fingerprints (at least 32 bytes). Keep it stable across restarts (a
    ///   new key makes every replay a conflict) and apart from the store.
    ///   - committed: told after each commit that recorded events, with the
    ///     session as it left it and the events as stored (the webhook
    ///     outbox's deliverer wakes on it); it must return at once.
    public init(store: any CheckoutStore, providers: any ProviderDirectory, fingerprintKey: Data,
                configuration: CheckoutConfiguration = .init(),
                logger: Logger = Logger(label: "gateway.checkout"), now: @escaping @Sendable () -> Date = { Date() },
                committed: @escaping @Sendable (Session, [SessionEvent]) -> Void = { _, _ in }) {
        self.committed = committed
        precondition(fingerprintKey.count >= 32, "the fingerprint key must have at least 32 bytes")
        self.idempotency = IdempotentRuns(store: store, fingerprinter: Fingerprinter(key: SymmetricKey(data: fingerprintKey)))
        self.sealer = InstrumentSealer(fingerprintKey: fingerprintKey)
        self.store = store
        if let shared = store as? any SharedFingerprintKey {
            let check = HMAC<SHA256>.authenticationCode(for: Data("gateway fingerprint key check v1".utf8), using: SymmetricKey(data: fingerprintKey))
            shared.expectFingerprintKey(check: Hex.lowercase(check))
        }
        self.directory = providers
        self.configuration = configuration
        self.logger = logger
        // Truncated to the millisecond, as every document writes dates (``WireDate``): what the engine keeps reads back the same.
        self.now = { WireDate.truncated(now()) }
        self.breakers = CircuitBreakers(threshold: configuration.breakerThreshold, cooldown: configuration.breakerCooldown)
        self.relay = EventRelay(store: store, hub: hub, logger: logger)
    }

    // MARK: Sessions

    /// Opens a session and lists the methods that may pay it.
    /// - Parameter mode: test or live (from the caller's API key): only
    ///   providers of this mode ever serve the session.
    public func createSession(_ request: NewSession, idempotencyKey: String? = nil, mode: PaymentMode = .test) async throws(Problem) -> SessionSnapshot {
        try await guarded {
            let snapshot = try await idempotency.run(idempotencyKey, mode: mode, operation: "create_session", target: "", request: request) { key in
                let at = self.now()
                guard Currency(code: request.amount.currency) != nil else {
                    throw ProblemCatalog.problem(code: .invalidRequest, detail: "amount.currency \(request.amount.currency) is not a known ISO 4217 currency")
                }
                if let country = request.country, !Self.isCountryCode(country) {
                    throw ProblemCatalog.problem(code: .invalidRequest, detail: "country must be an ISO 3166-1 alpha-2 code such as SA (got \(country))")
                }
                guard !request.orderId.isEmpty else { throw ProblemCatalog.problem(code: .invalidRequest, detail: "orderId must not be empty") }
                guard !Self.hasControlCharacter(request.orderId) else {
                    throw ProblemCatalog.problem(code: .invalidRequest, detail: "orderId must not contain control characters")
                }
                if let reference = request.payer?.reference, !Payer.isValidReference(reference) {
                    throw ProblemCatalog.problem(code: .invalidRequest, detail: "payer.reference must be 1 to 64 visible ASCII characters with no spaces")
                }
                var session: Session
                do {
                    session = try Session(
                        id: Identifiers.make("ses"), mode: mode, amount: request.amount, country: request.country, orderID: request.orderId,
                        capture: request.capture ?? .automatic, payer: request.payer, returnURL: request.returnUrl,
                        createdAt: at, expiresAt: at.addingTimeInterval(self.configuration.sessionLifetime))
                }
                // Asked before the one commit, so replays and every host see the same list.
                let offered = await self.fetchInstruments(for: session)
                session.instruments = offered.instruments
                // What does not change again is written once, for this and every later commit.
                session.keepFixedMembersWritten()
                // The answer is the session as committed (its version bumped), so a replay reads the same.
                var committed = session
                committed.version += 1
                let offer = self.offer(for: session)
                let snapshot = SessionSnapshot(session: committed, availableMethods: offer.methods,
                                               instruments: self.instrumentsView(for: session, availableMethods: offer.methods),
                                               fields: offer.fields, forms: offer.forms)
                let event = SessionEvent(sessionID: session.id, at: at, type: .sessionCreated, status: SessionStatus.open.rawValue,
                                         amount: session.amount, detail: "order \(session.orderID)" + (offered.summary.map { "; \($0)" } ?? ""))
                // The answer kept for replays leaves the forms out (some 7 kB a
                // session, the same for every session of a manifests snapshot):
                // a replay shows the forms of its methods as they are now.
                var kept = snapshot
                kept.fields = [:]
                kept.forms = [:]
                try await self.commit(session, events: [event], answer: key?.answer(kept, at: at))
                return snapshot
            }
            return snapshot.fields.isEmpty ? withForms(snapshot) : snapshot
        }
    }

    /// `snapshot` (a replayed answer) with the forms its methods have now.
    func withForms(_ snapshot: SessionSnapshot) -> SessionSnapshot {
        guard !snapshot.availableMethods.isEmpty else { return snapshot }
        let offer = offer(for: snapshot.session)
        var filled = snapshot
        for method in snapshot.availableMethods {
            filled.fields[method] = offer.fields[method]
            filled.forms[method] = offer.forms[method]
        }
        return filled
    }

    /// The session as it now is.
    ///
    /// `mode`, on this and every other operation on a session or a payment:
    /// the caller's (its API key's); a session of the other mode is
    /// `not_found`. Nil for a caller that sees every mode (the CLI, an embedder).
    public func session(_ id: String, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await guarded {
            let session = try await load(id, mode: mode)
            let offer = offer(for: session)
            return SessionSnapshot(session: session, availableMethods: offer.methods, instruments: instrumentsView(for: session, availableMethods: offer.methods),
                                   fields: offer.fields, forms: offer.forms)
        }
    }

    /// The session a payment (an attempt) belongs to.
    public func session(ofPayment paymentID: String, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await guarded {
            try await session(sessionID(ofAttempt: paymentID), mode: mode)
        }
    }

    /// A payment (an attempt) as recorded, with no provider call: its status
    /// and balance, and each capture, refund or void still held and why.
    public func payment(_ paymentID: String, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await guarded {
            try await load(sessionID(ofAttempt: paymentID), mode: mode).attempt(paymentID)
        }
    }

    /// The merchant abandons the checkout. A pending attempt is first
    /// withdrawn at its provider (``withdraw(_:attempt:key:)``: the provider's
    /// void, Swedbank Pay's abort or Worldline's cancel, then a verify); the
    /// abort is refused while an attempt is still live after that (its money
    /// may still move; it is reconciled first).
    public func abort(session id: String, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await guarded {
            let sessionMode = try await self.mode(ofSession: id, caller: mode)
            return try await idempotency.run(idempotencyKey, mode: sessionMode, operation: "abort", target: id, request: EmptyBody()) { key in
                try await self.locks.withLock(id) {
                    var session = try await self.load(id)
                    if session.status == .open, let live = session.liveAttempt, live.status == .pending {
                        session = try await self.withdraw(session, attempt: live, key: key)
                    }
                    try session.abort()
                    let at = self.now()
                    session.updatedAt = at
                    var committed = session
                    committed.version += 1
                    let snapshot = SessionSnapshot(session: committed, availableMethods: [])
                    let event = SessionEvent(sessionID: id, at: at, type: .sessionCancelled, status: session.status.rawValue, detail: "aborted by the merchant")
                    try await self.commit(session, events: [event], answer: key?.answer(snapshot, at: at))
                    return snapshot
                }
            }
        }
    }

    /// A session's events: those numbered after `after` (its own 1, 2, 3, ...),
    /// then live ones. A reader more than `buffer` live events behind is ended
    /// with ``SessionEvents/FellBehind`` and resumes from its `resumeAfter`.
    public func events(ofSession id: String, after: Int64 = 0, mode: PaymentMode? = nil,
                       buffer: Int = SessionEvents.defaultBuffer) async throws(Problem) -> SessionEvents {
        try await guarded {
            _ = try await load(id, mode: mode)
            relay.start()
            return SessionEvents(sessionID: id, after: after, store: store, hub: hub, buffer: max(buffer, 1))
        }
    }

    /// A session's events as recorded now, numbered after `after`, oldest first.
    public func recordedEvents(ofSession id: String, after: Int64 = 0, mode: PaymentMode? = nil) async throws(Problem) -> [SessionEvent] {
        try await guarded {
            _ = try await load(id, mode: mode)
            return try await store.events(ofSession: id, after: after)
        }
    }

    /// The methods `session` offers now: those an eligible provider offers in its currency (sorted).
    public func availableMethods(for session: Session) -> [String] {
        offer(for: session).methods
    }

    /// What `session` offers now, in one pass over the providers that may
    /// serve it (by priority, then id): its available methods, sorted, and
    /// per method the form the first of them offering it declares, which is
    /// where routing sends an attempt first. When that provider declares
    /// none, the method has no form.
    func offer(for session: Session) -> (methods: [String], fields: [String: [Field]], forms: [String: [UInt8]]) {
        guard session.status == .open else { return ([], [:], [:]) }
        let at = ContinuousClock.now
        let profiles = directory.profiles()
        // Indices, not copies, to choose: this runs for every session answer.
        let serving = profiles.indices.filter { serves(profiles[$0], session, at: at) }
            .sorted { (profiles[$0].priority, profiles[$0].id) < (profiles[$1].priority, profiles[$1].id) }
            .map { profiles[$0] }
        let currency = session.amount.currency
        let offer = offers.offer(serving: serving, currency: currency) {
            var methods = Set<String>()
            var fields: [String: [Field]] = [:]
            var forms: [String: [UInt8]] = [:]
            for profile in serving {
                for method in profile.methods(in: currency) where methods.insert(method).inserted {
                    fields[method] = profile.fields[method]
                    forms[method] = profile.forms[method]
                }
            }
            return OfferCache.Offer(methods: methods.sorted(), fields: fields, forms: forms)
        }
        return (offer.methods, offer.fields, offer.forms)
    }

    /// Checks what a payer typed against `method`'s form, every field (those
    /// typed on the device too), for a client that validates while the payer
    /// types. Nothing is stored and no provider is called; an `invalid_fields`
    /// problem lists each field not filled right.
    public func validate(session id: String, method: String, values: [String: String], mode: PaymentMode? = nil) async throws(Problem) {
        try await guarded {
            let session = try await self.load(id, mode: mode)
            guard session.status == .open else {
                throw ProblemCatalog.problem(code: .invalidState, detail: "session \(id) is \(session.status.rawValue); only an open session's fields are checked")
            }
            let offer = self.offer(for: session)
            guard offer.methods.contains(method) else {
                throw ProblemCatalog.problem(code: .methodUnavailable, detail: "\(method.prefix(40)) is not available for session \(id)")
            }
            let issues = FieldValidation.validate(values, against: offer.fields[method] ?? [], now: self.now())
            if !issues.isEmpty { throw ProblemCatalog.invalidFields(issues, method: method, path: "values.") }
        }
    }

    /// Whether `profile` may serve `session` now: enabled, of its mode, able
    /// to take its amount, currency, country and capture mode, and its
    /// circuit not open. What available methods, instruments and their view
    /// all ask (the router asks the same per method).
    func serves(_ profile: ProviderProfile, _ session: Session, at: ContinuousClock.Instant) -> Bool {
        profile.refusal(amount: session.amount, country: session.country, capture: session.capture, mode: session.mode) == nil
            && breakers.state(of: profile.id, at: at) != .open
    }

    // MARK: Shared machinery

    /// The session as stored now: the cached copy when the store still has
    /// that version, else read (and cached).
    func load(_ id: String, mode: PaymentMode? = nil) async throws -> Session {
        let session: Session
        if let cached = sessions.get(id), try await store.sessionVersion(id) == cached.version {
            session = cached
        } else {
            guard let found = try await store.session(id) else { throw ProblemCatalog.problem(code: .notFound, detail: "no session \(id)") }
            sessions.put(found)
            session = found
        }
        // Another mode's session does not exist for this caller.
        if let mode, session.mode != mode { throw ProblemCatalog.problem(code: .notFound, detail: "no session \(id)") }
        return session
    }

    /// The mode of session `id`, which must be the caller's when it has one:
    /// idempotency keys are scoped by it.
    /// A session's mode never changes, so a cached copy of any version
    /// answers without a read of the store.
    func mode(ofSession id: String, caller: PaymentMode?) async throws -> PaymentMode {
        guard let cached = sessions.get(id) else { return try await load(id, mode: caller).mode }
        if let caller, cached.mode != caller { throw ProblemCatalog.problem(code: .notFound, detail: "no session \(id)") }
        return cached.mode
    }

    func sessionID(ofAttempt attemptID: String) async throws -> String {
        guard let found = try await store.sessionID(ofAttempt: attemptID) else { throw ProblemCatalog.problem(code: .notFound, detail: "no payment or attempt \(attemptID)") }
        return found
    }

    /// Commits `session` (read at its current version) with `events`, then
    /// publishes them. Returns the session at its new version.
    @discardableResult
    func commit(_ session: Session, events: [SessionEvent], answer: IdempotentAnswer? = nil,
                webhook: (provider: String, eventID: String)? = nil) async throws -> Session {
        var committed = session
        let stored: [SessionEvent]
        do {
            stored = try await store.commit(StoreChange(session: session, events: events, answer: answer, webhook: webhook))
        } catch {
            sessions.remove(session.id)
            throw error
        }
        committed.version += 1
        sessions.put(committed)
        hub.publish(stored)
        if !stored.isEmpty { self.committed(committed, stored) }
        return committed
    }

    /// The problem for a store failure, logged here (once: the problem is
    /// not logged again).
    ///
    /// An unavailable store is met before a provider is called (nothing
    /// reaches a provider for a change that could not be recorded first) and
    /// also after, when the commit recording a provider's answer fails: the
    /// detail says nothing of what was sent, only that a retry under the
    /// same idempotency key is safe (the intent bound the key before the
    /// call) and tells the outcome. It never names the store's location or
    /// its error text (the reason is logged): a problem may reach callers
    /// who are not authenticated.
    func storeProblem(_ error: any Error) -> Problem {
        if let unavailable = error as? StoreUnavailable {
            logger.warning("\(unavailable)")
            return ProblemCatalog.problem(
                code: .storeUnavailable,
                detail: "\(unavailable.callerDetail); retrying with the same idempotency key is safe and learns this request's outcome")
        }
        logger.error("store failure: \(error)")
        return ProblemCatalog.problem(
            code: .providerError,
            detail: "the payment store failed (the host logged why); retrying with the same idempotency key is safe and learns this request's outcome",
            retryable: true)
    }

    /// Runs an operation's body and reports whatever it throws as a problem.
    func guarded<T>(_ body: () async throws -> T) async throws(Problem) -> T {
        do {
            return try await body()
        } catch let problem as Problem {
            throw problem
        } catch let refused as DomainError {
            throw ProblemCatalog.problem(from: refused)
        } catch let conflict as StoreConflict {
            throw ProblemCatalog.problem(code: .invalidState, detail: "\(conflict): another request changed it first; read it again", retryable: true)
        } catch let refused as IntentRefused {
            throw ProblemCatalog.problem(code: .invalidState, detail: "\(refused.conflict): another request changed it first; nothing was sent; read it again", retryable: true)
        } catch {
            throw storeProblem(error)
        }
    }

    /// U+0000 to U+001F or U+007F to U+009F: never in an identifier a caller gives.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    static func isCountryCode(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

/// How the engine's documents are encoded at rest: sessions and committed
/// answers, through their codecs (``JSONPayload``): the same documents the
/// API shows. Stores use it too.
public enum DocumentCoding {
    public static func encode(_ value: some JSONPayload) -> Data {
        Data(value.jsonBytes())
    }

    public static func decode<T: JSONPayload>(_ type: T.Type, from data: Data) throws -> T {
        try T(jsonData: data)
    }
}
