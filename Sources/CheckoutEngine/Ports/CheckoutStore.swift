import Foundation

/// The engine's durable memory. A change is committed atomically (the session,
/// its new events, and the idempotent answer it produced) and is durable when
/// `commit` returns, so the engine acknowledges nothing that could be lost.
///
/// Never given card data: sessions and attempts hold no instrument, and
/// answers are built from them.
public protocol CheckoutStore: Sendable {
    /// Applies `change` atomically. A session's `version` must equal the
    /// stored one (0 for a new session), else ``StoreConflict`` is thrown and
    /// nothing is written; on success the stored version is `version + 1`.
    /// Returns the events as stored, with their numbers: each session's events
    /// are numbered 1, 2, 3, ... in commit order, none skipped and none given
    /// twice, even to commits running at once.
    func commit(_ change: StoreChange) async throws -> [SessionEvent]
    func session(_ id: String) async throws -> Session?
    /// The stored version of a session (nil if there is none): lets the
    /// engine use its cached copy when it is still current.
    func sessionVersion(_ id: String) async throws -> Int?
    /// The session an attempt (a payment) belongs to.
    func sessionID(ofAttempt attemptID: String) async throws -> String?
    /// The attempt of `provider` that holds provider reference `reference`,
    /// if one does: one that is neither failed nor cancelled. A reference is
    /// one payment's (``StoreConflict/referenceHeld(provider:reference:)``).
    func attempt(ofProvider provider: String, holding reference: String) async throws -> String?
    /// What an idempotency key is bound to: its request's fingerprint, and
    /// the answer first given under it once there is one.
    func answer(forKey key: String) async throws -> IdempotentAnswer?
    /// A session's events numbered after `after` (its own numbers), oldest first.
    func events(ofSession id: String, after: Int64) async throws -> [SessionEvent]
    /// Live attempts whose next verify is due at `now` (pending ones, and
    /// processing ones whose engine lost its lease), oldest first.
    func dueAttempts(at now: Date, limit: Int) async throws -> [AttemptRef]
    /// Claims for `claimant` the live attempts due at `now` that no other
    /// claimant holds, until `until`: what one round of a reconciliation
    /// pass verifies at once (``Reconciler``).
    /// Hosts sharing a store each get other attempts, so each due check runs
    /// on one host; a claim ends at `until`, or when the attempt's next
    /// commit changes its status or when it is due (the attempt is then due
    /// again, for anyone). A store only one host uses may answer
    /// ``dueAttempts(at:limit:)`` (the default).
    func claimDueAttempts(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [AttemptRef]
    /// Payments with a capture, refund or void held (not settled yet),
    /// the earliest due first.
    func heldPayments(limit: Int) async throws -> [AttemptRef]
    /// Open sessions past their deadline with no live attempt (one with a live
    /// attempt waits for reconciliation to settle it first).
    func expiredSessions(at now: Date, limit: Int) async throws -> [String]
    /// Whether a provider's notification `eventID` was already applied.
    func hasWebhook(provider: String, eventID: String) async throws -> Bool
    /// Ends the store's background work and connections; nothing is lost
    /// (every commit that returned is durable). Whoever runs the store closes
    /// it, once, after its last call: ``PaymentGateway`` at its shutdown.
    /// A second call does nothing.
    func close() async
    /// What the store is doing now, for a log (a shutdown that is slow):
    /// its connections and queues; nil when it has nothing to say.
    var activity: String? { get }
}

extension CheckoutStore {
    public var activity: String? { nil }

    public func sessionVersion(_ id: String) async throws -> Int? {
        try await session(id)?.version
    }

    public func claimDueAttempts(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [AttemptRef] {
        try await dueAttempts(at: now, limit: limit)
    }
}

/// The store cannot be reached now (its database is down, or does not answer
/// within the store's deadline): nothing was written by the call that got
/// this, or, for a commit whose end was not heard, what was written is
/// found by reading again. The API answers `503 store_unavailable`,
/// retryable, with a `Retry-After`.
///
/// `reason` (and so `description`) is for the logs only: it may name the
/// database's host, port, user and schema and quote the database's error.
/// A caller, who may not even be authenticated (`/readyz`, an API key's
/// lookup), is told ``callerDetail`` and nothing more.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    /// What failed, for ops (never a password); never shown to callers.
    public var reason: String
    /// When a retry may succeed, in seconds.
    public var retryAfter: Int

    /// How long a caller is told to wait when the store does not say: about
    /// how long a pool takes to reconnect to a database that is back.
    public static let defaultRetryAfter = 2

    public init(_ reason: String, retryAfter: Int = StoreUnavailable.defaultRetryAfter) {
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// For the logs: with the reason.
    public var description: String { "the payment store is unavailable: \(reason)" }

    /// What a caller is told: that the store is unavailable and when to
    /// retry, never where the store is or what it said.
    public var callerDetail: String { Self.callerDetail(waiting: retryAfter) }

    /// ``callerDetail`` for a wait of `seconds`.
    public static func callerDetail(waiting seconds: Int) -> String {
        "the payment store is unavailable; retry after \(seconds) seconds"
    }
}

/// One atomic change.
public struct StoreChange: Sendable {
    /// The session as it now is; `version` is the version it was read at.
    public var session: Session?
    public var events: [SessionEvent]
    /// An answer to record, or (with a nil `body`) an intent that binds its
    /// key. Written only if the key is new, or bound to the same fingerprint
    /// with no answer yet; otherwise the change is refused with
    /// ``StoreConflict/duplicateKey(_:)`` and nothing is written.
    public var answer: IdempotentAnswer?
    /// A provider notification applied with this change (deduplication).
    public var webhook: (provider: String, eventID: String)?

    public init(session: Session?, events: [SessionEvent], answer: IdempotentAnswer? = nil,
                webhook: (provider: String, eventID: String)? = nil) {
        self.session = session
        self.events = events
        self.answer = answer
        self.webhook = webhook
    }
}

/// What an idempotency key is bound to: the request (its fingerprint) from
/// the first try that reached a provider, and the answer once there is one.
///
/// A key is bound *with the intent*, in the same commit that records the
/// attempt or the held amount, before any provider hears of the request; so
/// a retry with another request is a conflict whatever became of the first
/// try. Its answer is filled in later, once, when the outcome is known.
public struct IdempotentAnswer: Sendable, Equatable {
    public var key: String
    /// What the request was (operation, target and body), hashed.
    public var fingerprint: String
    /// The answer document (JSON), replayed as is; nil while the request's
    /// outcome is not known yet (only its intent is recorded).
    public var body: Data?
    /// What the request acted on (an attempt id, a held operation's provider
    /// key), so a retry can find it.
    public var reference: String?
    public var createdAt: Date

    public init(key: String, fingerprint: String, body: Data?, reference: String? = nil, createdAt: Date) {
        self.key = key
        self.fingerprint = fingerprint
        self.body = body
        self.reference = reference
        self.createdAt = createdAt
    }
}

/// An attempt of a session.
public struct AttemptRef: Sendable, Hashable {
    public var sessionID: String
    public var attemptID: String
    public init(sessionID: String, attemptID: String) {
        self.sessionID = sessionID
        self.attemptID = attemptID
    }
}

/// Someone else changed the session since it was read, or the key or
/// notification was already used: nothing was written.
public enum StoreConflict: Error, Sendable, Equatable {
    case staleSession(id: String, expected: Int)
    case duplicateKey(String)
    case duplicateWebhook(provider: String, eventID: String)
    /// An attempt would hold a provider reference another attempt of the
    /// same provider holds (one neither failed nor cancelled): one provider
    /// reference is one payment. The store's own constraint, behind the
    /// engine's check (``Checkout/apply(_:to:attempt:at:)``), for two
    /// answers racing each other.
    case referenceHeld(provider: String, reference: String)
}

/// A change as the rows a store writes, computed once for every store: the
/// session's indexed columns and its document at the next version, and each
/// attempt's row with when reconciliation next has work on it.
public struct StoreRows: Sendable {
    public struct SessionRow: Sendable {
        public var id: String
        public var status: String
        /// The version it was read at (0: a new session, inserted).
        public var readVersion: Int
        public var amount: Int64
        public var currency: String
        public var orderID: String
        public var createdAt: Double
        public var updatedAt: Double
        public var expiresAt: Double
        /// The session as JSON, at its next version.
        public var document: Data
        /// How many of the change's events are the session's own: its row
        /// counts them, and they are numbered from that count.
        public var events: Int
    }

    public struct AttemptRow: Sendable {
        public var id: String
        public var providerID: String
        /// The provider's reference for it, unique per provider among
        /// attempts neither failed nor cancelled.
        public var providerReference: String?
        public var status: String
        /// ``Attempt/dueAt`` in seconds since 1970; nil when nothing is due.
        public var due: Double?
    }

    public let session: SessionRow?
    public let attempts: [AttemptRow]

    public init(_ change: StoreChange) {
        guard let session = change.session else {
            self.session = nil
            attempts = []
            return
        }
        var next = session
        next.version += 1
        self.session = SessionRow(
            id: session.id, status: session.status.rawValue, readVersion: session.version,
            amount: session.amount.value, currency: session.amount.currency, orderID: session.orderID,
            createdAt: session.createdAt.timeIntervalSince1970, updatedAt: session.updatedAt.timeIntervalSince1970,
            expiresAt: session.expiresAt.timeIntervalSince1970, document: DocumentCoding.encode(next),
            events: change.events.reduce(0) { $0 + ($1.sessionID == session.id ? 1 : 0) })
        attempts = session.attempts.map {
            AttemptRow(id: $0.id, providerID: $0.providerID, providerReference: $0.providerReference.map(StoredText.storable),
                       status: $0.status.rawValue, due: $0.dueAt?.timeIntervalSince1970)
        }
    }
}

/// A store several hosts share tells each host of the events the others
/// commit, so that an event stream open on one host sees a session's events
/// whichever host wrote them. A store only one host uses need not.
public protocol CommittedEventFeed: Sendable {
    /// Notices of commits (any host's, this one's included), in the order
    /// they were committed, until the store is closed.
    func committedEvents() -> AsyncStream<CommittedEvents>
}

public enum CommittedEvents: Sendable, Equatable {
    /// `session`'s events up to number `last` are recorded.
    case recorded(session: String, last: Int64)
    /// Notices may have been missed (the feed's connection was lost and is
    /// back): every open stream should look at the store again.
    case resync
}

/// A store several hosts share makes sure they all fingerprint requests
/// under the same key: with another key, an identical retry on another host
/// would be taken for another request under the same idempotency key. The
/// engine gives the store a check of its key (an HMAC under the key, which
/// does not reveal it); the first host's is kept, and a host whose check
/// differs is refused every call (``StoreUnavailable``, saying why).
public protocol SharedFingerprintKey: Sendable {
    func expectFingerprintKey(check: String)
}
