import Foundation
import GatewayPayloads

/// Where merchants' webhook endpoints and their deliveries are kept, and the
/// feed of every committed event they are made from (docs/webhooks.md).
///
/// The outbox is the event log itself: a session's events are written in
/// the transaction that changes the session (``CheckoutStore/commit(_:)``),
/// so an event exists exactly when its change committed. The feed lists
/// them all in one order with a cursor that never skips: an event that
/// becomes readable later always sorts after every cursor already handed out
/// (SQLite: one writer, rows numbered in commit order; PostgreSQL: events of
/// transactions still running are held back until every older one ended).
///
/// A delivery is one event for one endpoint. An endpoint's fan-out is
/// leased to one host at a time (``leaseFanOut``): it reads the feed after
/// the endpoint's cursor, sends what it can at once, and then, in one
/// transaction (``advance``), moves the cursor past that stretch, counts what
/// was delivered, and writes a delivery row only for what was not (a failed
/// try, the events of its session behind it, an endpoint not sending), so a
/// healthy endpoint costs its store one write per stretch, not three per
/// event. The rows are retried from there, each claimed with a lease
/// (``claimDeliveries``): one host sends each at a time, and one whose host
/// died is sent again by another when its lease ends.
public protocol WebhookStore: Sendable {
    /// Events after `cursor`, oldest first, at most `limit` scanned: those of
    /// `mode` (the session's) and, when `types` is not nil, of one of those
    /// types. ``FeedPage/next`` is the last position scanned, matching or not,
    /// so paging on from it never skips and never repeats.
    func feed(after cursor: EventCursor, mode: PaymentMode, types: Set<String>?, limit: Int) async throws -> FeedPage

    /// Records a new endpoint (its id must be new), its cursor at the feed's end
    /// now: it receives the events committed from then on.
    func createWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws
    /// Every endpoint not removed, oldest first.
    func webhookEndpoints() async throws -> [WebhookEndpointRecord]
    /// Endpoint `id`, removed or not; nil when there is none.
    func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord?
    /// Writes what may change of endpoint `endpoint.id` (its secrets, its
    /// state, its removal), not its cursor, if it is still as `previous`
    /// (its secret, state and removal as read): false, with nothing written,
    /// when there is no such endpoint or another write changed it since (a
    /// removal is never undone, a rotation never lost). An endpoint enabled
    /// again has its pending deliveries due at `now`, their tries and
    /// failing time forgotten (its back-off and retry window start again).
    func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord, from previous: WebhookEndpointRecord, at now: Date) async throws -> Bool

    /// Leases endpoint `endpoint`'s fan-out to `claimant` until `until`:
    /// true when it was free at `now` (never leased, or its lease ended) or
    /// already `claimant`'s. What is sent at once while it holds the lease is
    /// sent by no other host (once, normally; at least once when a lease ends
    /// mid-stretch).
    func leaseFanOut(endpoint: String, claimant: String, at now: Date, until: Date) async throws -> Bool
    /// Ends every fan-out lease `claimant` holds (its host is stopping:
    /// another takes its endpoints at once, not when the leases end).
    func releaseFanOut(claimant: String) async throws
    /// Of `sessions`, those with a pending delivery to `endpoint` (their
    /// later events queue behind it rather than go at once).
    func pendingSessions(endpoint: String, among sessions: [String]) async throws -> Set<String>
    /// In one transaction: moves endpoint `endpoint`'s cursor from `from` to
    /// `to`, counts what `sent` delivered, and writes its rows: each of
    /// ``SentStretch/queue`` as given (pending, its tries, due time and
    /// failure), each of ``SentStretch/inFlight`` pending and claimed by
    /// `claimant` until `until` (its try's outcome is recorded with
    /// ``recordDeliveries(_:claimant:)``); one already written is left as it
    /// is. False, with nothing written, when its cursor is no longer `from`
    /// (another host advanced the same stretch first).
    func advance(endpoint: String, from: EventCursor, to: EventCursor, _ sent: SentStretch, claimant: String, until: Date) async throws -> Bool
    /// Claims for `claimant`, until `until`, deliveries that are due at `now`:
    /// pending, of an enabled endpoint, not held by another claimant's lease,
    /// and each the first pending one of its session for its endpoint (a
    /// session's later events wait for its earlier ones). Oldest first.
    func claimDeliveries(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [WebhookDelivery]
    /// Records, in one transaction, what became of deliveries `claimant`
    /// claimed: delivered, or to be tried again at `retryAt`. One whose claim
    /// was lost (its lease ended and another claimant took it) is left as it
    /// is; returns how many were recorded.
    @discardableResult
    func recordDeliveries(_ outcomes: [DeliveryOutcome], claimant: String) async throws -> Int
    /// ``recordDeliveries(_:claimant:)`` then ``claimDeliveries(at:limit:claimant:until:)``,
    /// in one transaction where the store can (a sending loop's every turn:
    /// one commit, and one sync, instead of two). Nothing is claimed when
    /// `limit` is 0.
    func recordThenClaim(_ outcomes: [DeliveryOutcome], claimant: String, at now: Date, limit: Int, until: Date) async throws -> [WebhookDelivery]
    /// Sends `deliveries` again (a replay): each one not written yet is
    /// written pending, due at `now`; one delivered or given up is put back
    /// to pending, due at `now`, its tries counted afresh, its body kept (the
    /// bytes sent the first time). A pending one is left to its own tries
    /// (one in flight keeps its claim). Returns how many will be sent.
    func requeueDeliveries(_ deliveries: [WebhookDelivery], at now: Date) async throws -> Int
    /// An endpoint's deliveries, counted by state (those delivered at once
    /// included), and when its oldest undelivered event was queued.
    func deliveryCounts(endpoint: String) async throws -> DeliveryCounts
    /// Records `check` (``SecretSealer/check``: an HMAC that says which key
    /// seals the endpoints' secrets, never the key) unless one is kept, and
    /// answers the one kept: a host whose check differs holds another key,
    /// and can neither open the secrets sealed so far nor seal new ones the
    /// others could open. Nil when another host's first check is being
    /// written at this moment (ask again).
    func agreeOnSealingKey(check: String) async throws -> String?
    /// Removes delivered and given-up deliveries queued before `before`, and every
    /// delivery of an endpoint removed before it; returns how many.
    func pruneDeliveries(before: Date) async throws -> Int
}

extension WebhookStore {
    public func recordThenClaim(_ outcomes: [DeliveryOutcome], claimant: String, at now: Date, limit: Int, until: Date) async throws -> [WebhookDelivery] {
        try await recordDeliveries(outcomes, claimant: claimant)
        return limit > 0 ? try await claimDeliveries(at: now, limit: limit, claimant: claimant, until: until) : []
    }
}

/// A position in the event feed. `transaction` orders first (PostgreSQL's
/// transaction id; 0 on SQLite), then `row`. Shown to merchants as one
/// opaque text (``text``).
public struct EventCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var transaction: UInt64
    public var row: Int64

    /// Before every event.
    public static let start = EventCursor(transaction: 0, row: 0)
    /// After every event (each part fits a signed 64-bit column).
    public static let end = EventCursor(transaction: UInt64(Int64.max), row: Int64.max)

    public init(transaction: UInt64, row: Int64) {
        self.transaction = transaction
        self.row = row
    }

    public static func < (a: EventCursor, b: EventCursor) -> Bool {
        (a.transaction, a.row) < (b.transaction, b.row)
    }

    /// `cur_<transaction>_<row>`.
    public var text: String { "cur_\(transaction)_\(row)" }
    public var description: String { text }

    /// A cursor from its ``text``; nil when `text` is not one.
    public init?(text: String) {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        // Each part fits a signed 64-bit column (``end``): a store binds them as such.
        guard parts.count == 3, parts[0] == "cur", let transaction = UInt64(parts[1]), transaction <= UInt64(Int64.max),
              let row = Int64(parts[2]), row >= 0 else { return nil }
        self.init(transaction: transaction, row: row)
    }
}

/// One event in the feed.
public struct FeedEvent: Sendable, Equatable {
    public var cursor: EventCursor
    /// The mode of its session.
    public var mode: PaymentMode
    public var event: SessionEvent

    public init(cursor: EventCursor, mode: PaymentMode, event: SessionEvent) {
        self.cursor = cursor
        self.mode = mode
        self.event = event
    }

    /// The event's id, the same in the feed and in every delivery of it
    /// (its `webhook-id`): `evt_`, its session and its number in the session.
    public var id: String { FeedEvent.id(session: event.sessionID, number: event.sequence) }

    public static func id(session: String, number: Int64) -> String { "evt_\(session)_\(number)" }
}

/// A stretch of the feed.
public struct FeedPage: Sendable, Equatable {
    public var events: [FeedEvent]
    /// The last position scanned (the cursor given when nothing was).
    public var next: EventCursor
    /// Whether the scan stopped at its limit (more may follow at once).
    public var more: Bool

    public init(events: [FeedEvent], next: EventCursor, more: Bool) {
        self.events = events
        self.next = next
        self.more = more
    }
}

/// How an endpoint signs (Standard Webhooks): `v1` (HMAC-SHA256 with a
/// shared secret) or `v1a` (Ed25519: the merchant holds only a public key).
public enum WebhookSigning: String, Sendable, CaseIterable {
    case hmac = "v1"
    case ed25519 = "v1a"
}

/// One merchant endpoint as stored. Its signing secrets are sealed (AES-GCM
/// under a key outside the database): the store never holds one in clear.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Receives its deliveries.
        case enabled
        /// Queues them, delivering none until enabled again (by ops, or
        /// after failing for longer than its retry window).
        case disabled
    }

    /// `we_…`.
    public var id: String
    public var url: String
    public var mode: PaymentMode
    /// The event types it receives; nil: all.
    public var types: [String]?
    public var description: String?
    public var signing: WebhookSigning
    /// The current signing secret, sealed.
    public var secret: Data
    /// For `v1a`, the public key merchants verify with (`whpk_…`).
    public var publicKey: String?
    /// The secret before the last rotation, sealed, and until when it still signs.
    public var previousSecret: Data?
    public var previousUntil: Date?
    public var state: State
    /// Why it is disabled (ops, or the retry window), for ops.
    public var stateReason: String?
    public var createdAt: Date
    public var removedAt: Date?
    /// Where its fan-out stands in the feed (read from the store; only
    /// ``WebhookStore/advance(endpoint:from:to:_:claimant:until:)`` moves it).
    public var cursor: EventCursor
    /// Where its feed began (read from the store: the feed's end when it was
    /// registered): a replay reaches no further back.
    public var start: EventCursor

    public init(id: String, url: String, mode: PaymentMode, types: [String]?, description: String?, signing: WebhookSigning,
                secret: Data, publicKey: String?, previousSecret: Data? = nil, previousUntil: Date? = nil,
                state: State = .enabled, stateReason: String? = nil, createdAt: Date, removedAt: Date? = nil,
                cursor: EventCursor = .start, start: EventCursor = .start) {
        self.id = id
        self.url = url
        self.mode = mode
        self.types = types
        self.description = description
        self.signing = signing
        self.secret = secret
        self.publicKey = publicKey
        self.previousSecret = previousSecret
        self.previousUntil = previousUntil
        self.state = state
        self.stateReason = stateReason
        self.createdAt = createdAt
        self.removedAt = removedAt
        self.cursor = cursor
        self.start = start
    }

    /// A new endpoint id: `we_` and a time-ordered random part.
    public static func newID() -> String { Identifiers.make("we") }

    /// Whether it receives events of type `type`.
    public func wants(_ type: String) -> Bool { types.map { $0.contains(type) } ?? true }
}

/// What sending a stretch of the feed at once came to
/// (``WebhookStore/advance(endpoint:from:to:_:claimant:until:)``).
public struct SentStretch: Sendable {
    /// How many were delivered (each a 2xx in time), the last when.
    public var delivered = 0
    public var lastDelivered: Date?
    /// Those not delivered: a failed try (its try counted, its next due), the
    /// events of its session behind it, those not tried.
    public var queue: [WebhookDelivery] = []
    /// Those whose try is still in flight, left to the retry loop.
    public var inFlight: [WebhookDelivery] = []

    public init(delivered: Int = 0, lastDelivered: Date? = nil, queue: [WebhookDelivery] = [], inFlight: [WebhookDelivery] = []) {
        self.delivered = delivered
        self.lastDelivered = lastDelivered
        self.queue = queue
        self.inFlight = inFlight
    }
}

/// One event for one endpoint.
public struct WebhookDelivery: Sendable, Equatable {
    public enum State: String, Sendable {
        case pending
        case delivered
        /// Failed for longer than the retry window while its endpoint took
        /// others: no longer tried (a replay sends it again), and no longer
        /// holding back its session's later events.
        case abandoned
    }

    public var endpointID: String
    public var sessionID: String
    /// The event's number in its session: a session's deliveries go in this order.
    public var number: Int64
    /// Where the event is in the feed (a replay names a stretch of it).
    public var cursor: EventCursor
    public var type: String
    /// The body sent, the same bytes at every try (the signature covers them).
    public var body: Data
    public var state: State
    /// Tries made so far.
    public var tries: Int
    public var queuedAt: Date
    /// When it is next due.
    public var dueAt: Date
    /// When its tries began failing (nil: none failed since it was queued or replayed).
    public var failingSince: Date?
    public var lastError: String?
    public var deliveredAt: Date?

    public init(endpointID: String, sessionID: String, number: Int64, cursor: EventCursor, type: String, body: Data,
                state: State = .pending, tries: Int = 0, queuedAt: Date, dueAt: Date, failingSince: Date? = nil,
                lastError: String? = nil, deliveredAt: Date? = nil) {
        self.endpointID = endpointID
        self.sessionID = sessionID
        self.number = number
        self.cursor = cursor
        self.type = type
        self.body = body
        self.state = state
        self.tries = tries
        self.queuedAt = queuedAt
        self.dueAt = dueAt
        self.failingSince = failingSince
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }

    /// Its `webhook-id`: the event's id, stable across tries and replays.
    public var webhookID: String { FeedEvent.id(session: sessionID, number: number) }
}

/// What became of one try of a delivery.
public struct DeliveryOutcome: Sendable, Equatable {
    public var endpointID: String
    public var sessionID: String
    public var number: Int64
    /// When the try ended.
    public var at: Date
    /// Nil: delivered (a 2xx in time). Otherwise why not, and when to try again.
    public var failure: Failure?

    public struct Failure: Sendable, Equatable {
        public var reason: String
        public var retryAt: Date
        /// Given up rather than retried (``WebhookDelivery/State/abandoned``).
        public var giveUp: Bool
        public init(reason: String, retryAt: Date, giveUp: Bool = false) {
            self.reason = reason
            self.retryAt = retryAt
            self.giveUp = giveUp
        }
    }

    public init(endpointID: String, sessionID: String, number: Int64, at: Date, failure: Failure?) {
        self.endpointID = endpointID
        self.sessionID = sessionID
        self.number = number
        self.at = at
        self.failure = failure
    }
}

/// An endpoint's deliveries by state.
public struct DeliveryCounts: Sendable, Equatable {
    public var delivered: Int
    /// Pending with no failed try since it was queued (or replayed).
    public var pending: Int
    /// Pending after at least one failed try.
    public var retrying: Int
    /// Given up after failing for longer than the retry window.
    public var abandoned: Int
    /// When the oldest undelivered one was queued.
    public var oldestUndelivered: Date?
    /// When the endpoint last took a delivery.
    public var lastDelivered: Date?

    public init(delivered: Int, pending: Int, retrying: Int, abandoned: Int = 0, oldestUndelivered: Date?, lastDelivered: Date? = nil) {
        self.delivered = delivered
        self.pending = pending
        self.retrying = retrying
        self.abandoned = abandoned
        self.oldestUndelivered = oldestUndelivered
        self.lastDelivered = lastDelivered
    }
}

/// An endpoint's event types as a store keeps them: one text, the types
/// comma separated (a type is a dotted name, ``SessionEvent/Kind``).
public enum WebhookTypes {
    public static func text(_ types: [String]) -> String { types.joined(separator: ",") }
    public static func list(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }
}
