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
    let gate = IdempotencyGate<any Sendable>()
    let breakers = Mutex<[String: CircuitBreaker]>([:])
    let fingerprinter: Fingerprinter
    let sealer: InstrumentSealer
    /// Relays other hosts' events (``relayOtherHostsEvents()``), once started.
    let relay = Mutex<Task<Void, Never>?>(nil)
    /// This engine's name among the hosts that share its store: what it
    /// claims due reconciliation work under (``Reconciler``).
    public let engineID = Identifiers.make("eng")

    /// - Parameter fingerprintKey: the secret that keys idempotency
    ///   fingerprints (at least 32 bytes). Keep it stable across restarts (a
    ///   new key makes every replay a conflict) and apart from the store.
    public init(store: any CheckoutStore, providers: any ProviderDirectory, fingerprintKey: Data,
                configuration: CheckoutConfiguration = .init(),
                logger: Logger = Logger(label: "gateway.checkout"), now: @escaping @Sendable () -> Date = { Date() }) {
        precondition(fingerprintKey.count >= 32, "the fingerprint key must have at least 32 bytes")
        self.fingerprinter = Fingerprinter(key: SymmetricKey(data: fingerprintKey))
        self.sealer = InstrumentSealer(fingerprintKey: fingerprintKey)
        self.store = store
        if let shared = store as? any SharedFingerprintKey {
            let check = HMAC<SHA256>.authenticationCode(for: Data("gateway fingerprint key check v1".utf8), using: SymmetricKey(data: fingerprintKey))
            shared.expectFingerprintKey(check: Hex.lowercase(check))
        }
        self.directory = providers
        self.configuration = configuration
        self.logger = logger
        self.now = now
    }

    deinit {
        relay.withLock { $0?.cancel() }
    }

    // MARK: Sessions

    /// Opens a session and lists the methods that may pay it.
    /// - Parameter mode: test or live (from the caller's API key): only
    ///   providers of this mode ever serve the session.
    public func createSession(_ request: NewSession, idempotencyKey: String? = nil, mode: PaymentMode = .test) async throws(Problem) -> SessionSnapshot {
        try await guarded {
            try await idempotent(idempotencyKey, mode: mode, operation: "create_session", target: "", request: request) { key in
                let at = self.now()
                guard Currency(code: request.amount.currency) != nil else {
                    throw ProblemCatalog.problem(code: "invalid_request", detail: "amount.currency \(request.amount.currency) is not a known ISO 4217 currency")
                }
                if let country = request.country, !Self.isCountryCode(country) {
                    throw ProblemCatalog.problem(code: "invalid_request", detail: "country must be an ISO 3166-1 alpha-2 code such as SA (got \(country))")
                }
                guard !request.orderId.isEmpty else { throw ProblemCatalog.problem(code: "invalid_request", detail: "orderId must not be empty") }
                guard !Self.hasControlCharacter(request.orderId) else {
                    throw ProblemCatalog.problem(code: "invalid_request", detail: "orderId must not contain control characters")
                }
                if let reference = request.payer?.reference, !Payer.isValidReference(reference) {
                    throw ProblemCatalog.problem(code: "invalid_request", detail: "payer.reference must be 1 to 64 visible ASCII characters with no spaces")
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
                // The answer is the session as committed (its version bumped), so a replay reads the same.
                var committed = session
                committed.version += 1
                let offer = self.offer(for: session)
                let snapshot = SessionSnapshot(session: committed, availableMethods: offer.methods,
                                               instruments: self.instrumentsView(for: session, availableMethods: offer.methods),
                                               fields: offer.fields)
                let event = SessionEvent(sessionID: session.id, at: at, type: "session.created", status: SessionStatus.open.rawValue,
                                         amount: session.amount, detail: "order \(session.orderID)" + (offered.summary.map { "; \($0)" } ?? ""))
                try await self.commit(session, events: [event], answer: key?.answer(snapshot, at: at))
                return snapshot
            }
        }
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
                                   fields: offer.fields)
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
            return try await idempotent(idempotencyKey, mode: sessionMode, operation: "abort", target: id, request: EmptyBody()) { key in
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
                    let event = SessionEvent(sessionID: id, at: at, type: "session.cancelled", status: session.status.rawValue, detail: "aborted by the merchant")
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
            relayOtherHostsEvents()
            return SessionEvents(sessionID: id, after: after, store: store, hub: hub, buffer: max(buffer, 1))
        }
    }

    /// On a store several hosts share (``CommittedEventFeed``), hands the
    /// events other hosts commit to this host's readers, from the first
    /// stream opened on: for each notice of a session someone reads here, the
    /// events after the last one its readers were handed are read from the
    /// store and published (a reader drops what it has, and fills any gap
    /// from the store: ``SessionEvents``). After a lost feed, every watched
    /// session is read again.
    func relayOtherHostsEvents() {
        guard let feed = store as? any CommittedEventFeed else { return }
        relay.withLock { running in
            guard running == nil else { return }
            let notices = feed.committedEvents()
            running = Task { [weak self] in
                for await notice in notices {
                    guard let self else { return }
                    switch notice {
                    case .recorded(let session, let last):
                        let (watched, delivered) = self.hub.watching(session)
                        guard watched, (delivered ?? 0) < last else { continue }
                        await self.publishRecorded(session, after: delivered ?? last - 1)
                    case .resync:
                        for (session, delivered) in self.hub.watched() {
                            await self.publishRecorded(session, after: delivered ?? 0)
                        }
                    }
                }
            }
        }
    }

    private func publishRecorded(_ session: String, after: Int64) async {
        do {
            hub.publish(try await store.events(ofSession: session, after: after))
        } catch {
            // The readers fill the gap from the store with the next event.
            logger.warning("events of \(session) committed by another host could not be read: \(error)")
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
    func offer(for session: Session) -> (methods: [String], fields: [String: [Field]]) {
        guard session.status == .open else { return ([], [:]) }
        let at = ContinuousClock.now
        let serving = directory.profiles().filter { serves($0, session, at: at) }.sorted { ($0.priority, $0.id) < ($1.priority, $1.id) }
        var methods = Set<String>()
        var fields: [String: [Field]] = [:]
        for profile in serving {
            for method in profile.methods(in: session.amount.currency) where methods.insert(method).inserted {
                fields[method] = profile.fields[method]
            }
        }
        return (methods.sorted(), fields)
    }

    /// Checks what a payer typed against `method`'s form, every field (those
    /// typed on the device too), for a client that validates while the payer
    /// types. Nothing is stored and no provider is called; an `invalid_fields`
    /// problem lists each field not filled right.
    public func validate(session id: String, method: String, values: [String: String], mode: PaymentMode? = nil) async throws(Problem) {
        try await guarded {
            let session = try await self.load(id, mode: mode)
            guard session.status == .open else {
                throw ProblemCatalog.problem(code: "invalid_state", detail: "session \(id) is \(session.status.rawValue); only an open session's fields are checked")
            }
            let offer = self.offer(for: session)
            guard offer.methods.contains(method) else {
                throw ProblemCatalog.problem(code: "method_unavailable", detail: "\(method.prefix(40)) is not available for session \(id)")
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
            && breakerState(profile.id, at: at) != .open
    }

    // MARK: Shared machinery

    /// The session as stored now: the cached copy when the store still has
    /// that version, else read (and cached).
    func load(_ id: String, mode: PaymentMode? = nil) async throws -> Session {
        let session: Session
        if let cached = sessions.get(id), try await store.sessionVersion(id) == cached.version {
            session = cached
        } else {
            guard let found = try await store.session(id) else { throw ProblemCatalog.problem(code: "not_found", detail: "no session \(id)") }
            sessions.put(found)
            session = found
        }
        // Another mode's session does not exist for this caller.
        if let mode, session.mode != mode { throw ProblemCatalog.problem(code: "not_found", detail: "no session \(id)") }
        return session
    }

    /// The mode of session `id`, which must be the caller's when it has one:
    /// idempotency keys are scoped by it.
    /// A session's mode never changes, so a cached copy of any version
    /// answers without a read of the store.
    func mode(ofSession id: String, caller: PaymentMode?) async throws -> PaymentMode {
        guard let cached = sessions.get(id) else { return try await load(id, mode: caller).mode }
        if let caller, cached.mode != caller { throw ProblemCatalog.problem(code: "not_found", detail: "no session \(id)") }
        return cached.mode
    }

    func sessionID(ofAttempt attemptID: String) async throws -> String {
        guard let found = try await store.sessionID(ofAttempt: attemptID) else { throw ProblemCatalog.problem(code: "not_found", detail: "no payment or attempt \(attemptID)") }
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
                code: "store_unavailable",
                detail: "\(unavailable.callerDetail); retrying with the same idempotency key is safe and learns this request's outcome")
        }
        logger.error("store failure: \(error)")
        return ProblemCatalog.problem(
            code: "provider_error",
            detail: "the payment store failed (the host logged why); retrying with the same idempotency key is safe and learns this request's outcome",
            retryable: true)
    }

    /// Runs `body` once per idempotency key (see the type's rules).
    ///
    /// Keys are scoped by `mode` (a test key and a live key never meet). A
    /// key whose request is already bound (an earlier try recorded its
    /// intent) runs `body` again only with the same request, and `body` is
    /// told what the earlier try left (``IdempotencyScope/bound``) so it can
    /// settle or resume it rather than start anew.
    func idempotent<Request: Fingerprintable, Response: JSONPayload>(
        _ key: String?, mode: PaymentMode, operation: String, target: String, request: Request,
        _ body: @escaping @Sendable (IdempotencyScope?) async throws -> Response
    ) async throws -> Response {
        guard let key else { return try await body(nil) }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw ProblemCatalog.problem(code: "invalid_request", detail: "an idempotency key must have 1 to 255 bytes")
        }
        // As an HTTP header's value could not: two keys must never become one in a store.
        guard !Self.hasControlCharacter(key) else {
            throw ProblemCatalog.problem(code: "invalid_request", detail: "an idempotency key must not contain control characters")
        }
        let scoped = "\(mode.rawValue):\(key)"
        let fingerprint = fingerprinter.of(operation: operation, target: target, body: request)
        let store = self.store
        // Made only when thrown: a problem's text is built with string searches.
        let conflict: @Sendable () -> Problem = { ProblemCatalog.problem(code: "idempotency_conflict", detail: "idempotency key \"\(key)\" was already used with a different request") }
        // The key's answer if it has one, else `body` told what it is bound to.
        let once: @Sendable () async throws -> Response = {
            let stored = try await store.answer(forKey: scoped)
            if let stored {
                guard stored.fingerprint == fingerprint else { throw conflict() }
                if let body = stored.body { return try DocumentCoding.decode(Response.self, from: body) }
            }
            return try await body(IdempotencyScope(key: scoped, fingerprint: fingerprint, bound: stored))
        }
        do {
            let answer = try await gate.run(key: scoped, fingerprint: fingerprint) { () async throws -> any Sendable in
                // The gate serialises one key in this process only: another
                // host sharing the store may bind the key between this try's
                // read and its first write, and this try then wrote and sent
                // nothing. Answered as a retry under the key would be: from
                // the other host's answer, or its try as it now is. That can
                // race the other host again (its answer recorded meanwhile):
                // a few rounds, each reading what the store has.
                var round = 0
                while true {
                    do {
                        return try await once()
                    } catch let error where round < 3 && Self.lostTheKeyToAnotherHost(error) {
                        round += 1
                        guard let stored = try await store.answer(forKey: scoped) else { throw error }
                        guard stored.fingerprint == fingerprint else { throw conflict() }
                    }
                }
            }
            return answer as! Response
        } catch is IdempotencyGate<any Sendable>.Refusal {
            throw conflict()
        } catch StoreConflict.duplicateKey {
            throw ProblemCatalog.problem(code: "operation_in_progress", detail: "idempotency key \"\(key)\" is being answered by another host; retry with the same key for its answer")
        }
    }

    /// Errors a try meets, before it writes or sends anything, when another
    /// host's try under the same key got ahead: the key bound already (the
    /// commit refused), or that try's attempt live, or the session paid
    /// (completed) already. Only acted on when the key turns out bound to
    /// this same request.
    static func lostTheKeyToAnotherHost(_ error: any Error) -> Bool {
        switch error {
        case StoreConflict.duplicateKey, is IntentRefused: true
        case DomainError.attemptInProgress, DomainError.sessionAlreadyPaid, DomainError.sessionNotOpen(.completed): true
        default: false
        }
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
            throw ProblemCatalog.problem(code: "invalid_state", detail: "\(conflict): another request changed it first; read it again", retryable: true)
        } catch let refused as IntentRefused {
            throw ProblemCatalog.problem(code: "invalid_state", detail: "\(refused.conflict): another request changed it first; nothing was sent; read it again", retryable: true)
        } catch {
            throw storeProblem(error)
        }
    }

    /// A try's first commit (its intent: the attempt `processing`, the key
    /// bound) was refused: nothing was written and no provider was called.
    struct IntentRefused: Error {
        var conflict: StoreConflict
    }

    /// U+0000 to U+001F or U+007F to U+009F: never in an identifier a caller gives.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    static func isCountryCode(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

/// The key and fingerprint a mutating call runs under; makes the intent and
/// the answer to commit.
struct IdempotencyScope: Sendable {
    /// The key as stored: scoped by the session's mode.
    var key: String
    var fingerprint: String
    /// What an earlier try under this key recorded (its intent, no answer
    /// yet); nil on a first try.
    var bound: IdempotentAnswer?

    func answer(_ value: some JSONPayload, reference: String? = nil, at: Date) -> IdempotentAnswer {
        IdempotentAnswer(key: key, fingerprint: fingerprint, body: DocumentCoding.encode(value), reference: reference, createdAt: at)
    }

    /// Binds the key to this request before any provider hears of it;
    /// `reference` names what it acts on (nil: nothing live under it now).
    func intent(reference: String?, at: Date) -> IdempotentAnswer {
        IdempotentAnswer(key: key, fingerprint: fingerprint, body: nil, reference: reference, createdAt: bound?.createdAt ?? at)
    }

    /// The provider-side idempotency key of a follow-up operation under this key.
    func providerKey(_ operation: String, of paymentID: String) -> String { "\(paymentID):\(operation):\(key)" }
}

/// How the engine's documents are encoded at rest: sessions and committed
/// answers, through their hand-written codecs (``JSONPayload``), which write
/// the same JSON as their Codable conformances. Stores use it too.
public enum DocumentCoding {
    public static func encode(_ value: some JSONPayload) -> Data {
        Data(value.jsonBytes())
    }

    public static func decode<T: JSONPayload>(_ type: T.Type, from data: Data) throws -> T {
        try T(jsonData: data)
    }
}
