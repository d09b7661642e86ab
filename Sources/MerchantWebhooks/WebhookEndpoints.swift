import CheckoutEngine
import Foundation
import GatewayPayloads
import PluginHost

/// Merchants' endpoints: registered, listed, rotated, disabled, enabled,
/// replayed and removed, each within one mode (an API key's). A signing
/// secret is made here, shown once (``Created/secret``), and stored only
/// sealed (``SecretSealer``).
public final class WebhookEndpoints: Sendable {
    private let store: any WebhookStore & CheckoutStore
    private let sealer: SecretSealer
    private let allowPrivate: Bool
    private let resolve: @Sendable (String) async throws -> [String]
    private let now: @Sendable () -> Date
    /// Rung when something may now be due (an endpoint registered or enabled, a replay).
    private let changed: @Sendable () -> Void
    private let key: SealingKeyAgreement

    /// How long a rotated secret keeps signing beside the new one, unless asked otherwise.
    public static let defaultOverlap: Duration = .seconds(24 * 3600)
    /// The longest overlap a rotation may ask for.
    public static let longestOverlap: Duration = .seconds(7 * 86_400)
    public static let maximumDescriptionLength = 500

    /// How far back a replay reaches (``WebhookConfiguration/retention``).
    private let retention: Duration

    public init(store: any WebhookStore & CheckoutStore, sealer: SecretSealer, allowPrivate: Bool,
                retention: Duration = WebhookConfiguration().retention,
                resolve: (@Sendable (String) async throws -> [String])? = nil,
                now: @escaping @Sendable () -> Date = { Date() }, changed: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.sealer = sealer
        self.allowPrivate = allowPrivate
        self.retention = retention
        // Never the pool adapters' egress checks share: a name server that
        // never answers holds a thread of the webhooks' own, for a bounded time.
        if let resolve {
            self.resolve = resolve
        } else {
            let resolver = WebhookResolver()
            self.resolve = { try await resolver.resolve($0) }
        }
        self.now = now
        self.changed = changed
        key = SealingKeyAgreement(store: store, sealer: sealer)
    }

    /// The sealing key agrees with the store's, or a refusal that says what to do.
    private func sealingKeyAgrees() async throws {
        do {
            try await key.ensure()
        } catch let mismatch as SealingKeyAgreement.Mismatch {
            throw WebhookEndpointError(mismatch.description)
        }
    }

    /// An endpoint and its new signing secret, shown this once.
    public struct Created: Sendable {
        public var endpoint: WebhookEndpointRecord
        public var secret: WebhookSecret
    }

    /// What the merchant is shown of a new secret: a `v1` secret itself
    /// (`whsec_…`), which they need to verify; nothing of a `v1a` private key,
    /// which signs and never leaves the gateway (they verify with
    /// ``WebhookEndpointRecord/publicKey``).
    public static func shownSecret(_ secret: WebhookSecret) -> String? {
        secret.signing == .hmac ? secret.text : nil
    }

    /// Registers an endpoint of `mode` receiving `types` (nil: all) from now on.
    public func create(url: String, mode: PaymentMode, types: [String]?, description: String?,
                       signing: WebhookSigning = .hmac) async throws -> Created {
        let target = try WebhookTarget(url)
        _ = try await target.check(allowPrivate: allowPrivate, resolve: resolve)
        let types = try Self.checked(types)
        if let description, description.count > Self.maximumDescriptionLength {
            throw WebhookEndpointError("description must be at most \(Self.maximumDescriptionLength) characters")
        }
        try await sealingKeyAgrees()
        let id = WebhookEndpointRecord.newID()
        let secret = WebhookSecret.generate(signing)
        let record = WebhookEndpointRecord(
            id: id, url: target.url.absoluteString, mode: mode, types: types, description: description, signing: signing,
            secret: try sealer.seal(secret, endpointID: id), publicKey: secret.publicKeyText, createdAt: now())
        try await store.createWebhookEndpoint(record)
        changed()
        return Created(endpoint: try await store.webhookEndpoint(id: id) ?? record, secret: secret)
    }

    /// Every endpoint of `mode` (nil: of both), removed ones left out.
    public func list(mode: PaymentMode?) async throws -> [WebhookEndpointRecord] {
        try await store.webhookEndpoints().filter { mode == nil || $0.mode == mode }
    }

    /// Endpoint `id` if it is of `mode` (nil: any) and not removed.
    public func endpoint(_ id: String, mode: PaymentMode?) async throws -> WebhookEndpointRecord? {
        guard let found = try await store.webhookEndpoint(id: id), found.removedAt == nil, mode == nil || found.mode == mode else { return nil }
        return found
    }

    /// How its deliveries stand.
    public func counts(_ id: String) async throws -> DeliveryCounts {
        try await store.deliveryCounts(endpoint: id)
    }

    /// Removes endpoint `id`: it receives nothing more. Nil when there is none (of `mode`).
    public func remove(_ id: String, mode: PaymentMode?) async throws -> WebhookEndpointRecord? {
        guard let found = try await endpoint(id, mode: mode) else { return nil }
        var removed = found
        removed.removedAt = now()
        try await write(removed, from: found)
        return removed
    }

    /// Writes `changed` over `read`, or refuses when another write changed it in between.
    private func write(_ changed: WebhookEndpointRecord, from read: WebhookEndpointRecord) async throws {
        guard try await store.updateWebhookEndpoint(changed, from: read, at: now()) else {
            throw WebhookEndpointConflict(id: read.id)
        }
    }

    /// A new secret for endpoint `id`; the current one keeps signing beside
    /// it (both signatures in each delivery) for `overlap`.
    public func rotate(_ id: String, mode: PaymentMode?, overlap: Duration = WebhookEndpoints.defaultOverlap) async throws -> Created? {
        guard overlap >= .zero, overlap <= Self.longestOverlap else {
            throw WebhookEndpointError("overlap must be between 0 and \(Int(Self.longestOverlap.seconds)) seconds")
        }
        guard let found = try await endpoint(id, mode: mode) else { return nil }
        try await sealingKeyAgrees()
        let secret = WebhookSecret.generate(found.signing)
        let at = now()
        var rotated = found
        rotated.previousSecret = overlap > .zero ? found.secret : nil
        rotated.previousUntil = overlap > .zero ? at.addingTimeInterval(overlap.seconds) : nil
        rotated.secret = try sealer.seal(secret, endpointID: id)
        rotated.publicKey = secret.publicKeyText
        // A rotation that raced another write is refused: the secret shown is the one that signs.
        try await write(rotated, from: found)
        return Created(endpoint: rotated, secret: secret)
    }

    /// Enables or disables endpoint `id`. Enabled again, its queued
    /// deliveries go out in order, its retry window starting again.
    public func setEnabled(_ id: String, mode: PaymentMode?, _ enabled: Bool, reason: String? = nil) async throws -> WebhookEndpointRecord? {
        guard let found = try await endpoint(id, mode: mode) else { return nil }
        var changedState = found
        changedState.state = enabled ? .enabled : .disabled
        changedState.stateReason = enabled ? nil : (reason ?? "disabled by ops")
        try await write(changedState, from: found)
        if enabled { changed() }
        return changedState
    }

    /// Sends endpoint `id` again its events after `after` up to `through`
    /// (nil: to the end), in order: those it was sent since it was
    /// registered (events after its cursor are on their way anyway), within
    /// the retention. One delivered or given up goes again with the body it
    /// had; one delivered at once (which keeps no row) with the session as it
    /// is now. Answers how many.
    public func replay(_ id: String, mode: PaymentMode?, after: EventCursor, through: EventCursor?) async throws -> Int? {
        guard let endpoint = try await endpoint(id, mode: mode) else { return nil }
        let at = now()
        let oldest = at.addingTimeInterval(-retention.seconds)
        let last = min(through ?? .end, endpoint.cursor)
        let maker = DeliveryMaker(sessions: store, states: nil) { _, _ in }
        var cursor = max(after, endpoint.start)
        var count = 0
        while cursor < last {
            let page = try await store.feed(after: cursor, mode: endpoint.mode, types: endpoint.types.map(Set.init), limit: 500)
            guard page.next != cursor else { break }
            let events = page.events.filter { $0.cursor <= last && $0.event.at >= oldest }
            count += try await store.requeueDeliveries(try await maker.deliveries(events, endpoint: id, at: at), at: at)
            cursor = page.next
        }
        changed()
        return count
    }

    /// `types` if each is an event type (``SessionEvent/Kind/all``), sorted, without repeats.
    static func checked(_ types: [String]?) throws(WebhookEndpointError) -> [String]? {
        guard let types else { return nil }
        guard !types.isEmpty else { throw WebhookEndpointError("types must name at least one event type, or be left out for all") }
        let known = Set(SessionEvent.Kind.all.map(\.rawValue))
        for type in types where !known.contains(type) {
            throw WebhookEndpointError("types: \(WebhookTarget.quoted(type)) is not an event type (the README's \"Session events\" lists them)")
        }
        return Array(Set(types)).sorted()
    }
}

/// An endpoint changed by another request between this one's read and its
/// write (a removal, a rotation, a state change): nothing was written. The
/// API's 409; asking again reads it as it now is.
public struct WebhookEndpointConflict: Error, Sendable, Equatable, CustomStringConvertible {
    public var id: String
    public var description: String { "webhook endpoint \(id) was changed by another request at the same moment; nothing was written: read it again" }
}
