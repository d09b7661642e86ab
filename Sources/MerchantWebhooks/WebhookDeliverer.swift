import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PluginHost
import Synchronization

/// Delivers the outbox to merchants' endpoints (docs/webhooks.md).
///
/// Two loops, each woken when commits land (``ring()``) and at least every
/// ``WebhookConfiguration/poll``:
///
/// - **Fan-out.** For each endpoint, the feed after its cursor (its mode,
///   its types) becomes deliveries, each with its body written once (the
///   event and its session as read then), and the cursor moves past them in
///   the same transaction (``WebhookStore/enqueueDeliveries``). A disabled
///   endpoint's events are queued too: they wait for it.
/// - **Sending.** Due deliveries are claimed with a lease, the first
///   undelivered one of each session per endpoint only, so a session's
///   events arrive in order while other sessions' keep flowing; each is a
///   POST signed as Standard Webhooks define, through the host's egress
///   client with its TLS rules and address checks. A 2xx within the timeout
///   delivers it; anything else is retried on the ``RetrySchedule``, and an
///   endpoint failing for longer than its window is disabled, its events
///   kept. Outcomes are written together, once per round.
///
/// On a store several hosts share, each delivery is claimed by one host at
/// a time; one whose host died mid-delivery is claimed again by another
/// when its lease ends (at least once, always; once, normally).
public final class WebhookDeliverer: Sendable {
    private let store: any WebhookStore
    private let sessions: any CheckoutStore
    private let sealer: SecretSealer
    private let configuration: WebhookConfiguration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let client: AsyncHTTPEgressClient
    private let ownsClient: Bool
    private let resolve: @Sendable (String) async throws -> [String]
    /// This host's name in the deliveries it claims.
    public let claimant: String
    private let key: SealingKeyAgreement
    private let fanOutBell = Doorbell()
    private let sendBell = Doorbell()
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// The pools retained in the egress client, by the addresses they may reach.
    private let pools = Mutex<Set<EgressTLS>>([])

    public init(store: any WebhookStore & CheckoutStore, sealer: SecretSealer, configuration: WebhookConfiguration = .init(),
                logger: Logger = Logger(label: "gateway.webhooks"), now: @escaping @Sendable () -> Date = { Date() },
                client: AsyncHTTPEgressClient? = nil, resolve: (@Sendable (String) async throws -> [String])? = nil) {
        self.store = store
        self.sessions = store
        self.sealer = sealer
        self.configuration = configuration
        self.logger = logger
        self.now = now
        self.client = client ?? AsyncHTTPEgressClient(connectionsPerHost: 8, maximumResponseBytes: 64 << 10)
        self.ownsClient = client == nil
        self.resolve = resolve ?? { try await EgressAddress.systemResolve($0) }
        self.key = SealingKeyAgreement(store: store, sealer: sealer)
        self.claimant = "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8))"
    }

    /// Starts both loops, once.
    public func start() {
        tasks.withLock { tasks in
            guard tasks.isEmpty else { return }
            tasks.append(Task { [self] in await fanOutLoop() })
            tasks.append(Task { [self] in await sendLoop() })
        }
    }

    /// New events may be in the outbox (a commit landed): fan out now.
    public func ring() {
        fanOutBell.ring()
    }

    /// Something may be due now (an endpoint enabled, a replay).
    public func due() {
        sendBell.ring()
    }

    /// Stops both loops after their current round; a delivery in flight is
    /// abandoned (its lease lets it be sent again: at least once).
    public func stop() async {
        let running = tasks.withLock { tasks in defer { tasks.removeAll() }; return tasks }
        for task in running { task.cancel() }
        for task in running { await task.value }
        let retained = pools.withLock { pools in defer { pools.removeAll() }; return pools }
        if ownsClient {
            await client.shutdown()
        } else {
            for tls in retained { await client.release(tls) }
        }
    }

    // MARK: Fan-out

    private func fanOutLoop() async {
        var lastPrune = Date.distantPast
        var lastReport = Date.distantPast
        while !Task.isCancelled {
            do {
                if try await fanOut() > 0 { sendBell.ring() }
                let at = now()
                if at.timeIntervalSince(lastReport) >= configuration.reportInterval.seconds {
                    lastReport = at
                    for endpoint in try await store.webhookEndpoints() {
                        configuration.observer.queued(endpoint.id, try await store.deliveryCounts(endpoint: endpoint.id), at)
                    }
                }
                if at.timeIntervalSince(lastPrune) > 3600 {
                    lastPrune = at
                    let pruned = try await store.pruneDeliveries(before: at.addingTimeInterval(-configuration.retention.seconds))
                    if pruned > 0 { logger.info("webhooks: \(pruned) delivered deliveries older than the retention pruned") }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("webhooks: queuing events for delivery failed, tried again shortly: \(error)")
            }
            await fanOutBell.wait(timeout: configuration.poll)
        }
    }

    /// Queues every endpoint's new events; answers how many deliveries.
    func fanOut() async throws -> Int {
        var queued = 0
        for endpoint in try await store.webhookEndpoints() {
            var cursor = endpoint.cursor
            while !Task.isCancelled {
                let page = try await store.feed(after: cursor, mode: endpoint.mode, types: endpoint.types.map(Set.init), limit: configuration.fanOutPage)
                guard page.next != cursor else { break }
                let at = now()
                var read: [String: Session?] = [:]
                var deliveries: [WebhookDelivery] = []
                deliveries.reserveCapacity(page.events.count)
                for event in page.events {
                    let sessionID = event.event.sessionID
                    if read[sessionID] == nil { read[sessionID] = .some(try await sessions.session(sessionID)) }
                    deliveries.append(WebhookDelivery(
                        endpointID: endpoint.id, sessionID: sessionID, number: event.event.sequence, cursor: event.cursor,
                        type: event.event.type.rawValue, body: WebhookBody.delivery(event, session: read[sessionID] ?? nil),
                        queuedAt: at, dueAt: at))
                }
                guard try await store.enqueueDeliveries(endpoint: endpoint.id, from: cursor, to: page.next, deliveries) else {
                    break  // another host queued this stretch first
                }
                queued += deliveries.count
                cursor = page.next
                if !page.more { break }
            }
        }
        return queued
    }

    // MARK: Sending

    private func sendLoop() async {
        var refused = false
        while !Task.isCancelled {
            var sent = 0
            do {
                // Nothing is claimed under a key that cannot open the secrets (said once).
                do {
                    try await key.ensure()
                    refused = false
                } catch let mismatch as SealingKeyAgreement.Mismatch {
                    if !refused { logger.error("webhooks: \(mismatch)") }
                    refused = true
                    await sendBell.wait(timeout: configuration.poll * 10)
                    continue
                }
                sent = try await sendRound()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("webhooks: a delivery round failed, tried again shortly: \(error)")
            }
            if sent == 0 { await sendBell.wait(timeout: configuration.poll) }
        }
    }

    /// One endpoint as a round sends to it: where, and with which secrets.
    private struct Route {
        var endpoint: WebhookEndpointRecord
        var target: WebhookTarget
        var secrets: [WebhookSecret]
    }

    /// Claims what is due, sends it, records what became of it; answers how many were tried.
    func sendRound() async throws -> Int {
        let at = now()
        let claimed = try await store.claimDeliveries(at: at, limit: configuration.sendBatch, claimant: claimant,
                                                      until: at.addingTimeInterval((configuration.timeout + configuration.leaseMargin).seconds))
        guard !claimed.isEmpty else { return 0 }
        var routes: [String: Result<Route, WebhookEndpointError>] = [:]
        for id in Set(claimed.map(\.endpointID)) {
            routes[id] = await route(id, at: at)
        }
        let outcomes = await withTaskGroup(of: (DeliveryOutcome, WebhookDelivery).self) { group in
            for delivery in claimed {
                let route = routes[delivery.endpointID] ?? .failure(WebhookEndpointError("the endpoint is gone"))
                group.addTask { [self] in (await send(delivery, via: route), delivery) }
            }
            var outcomes: [(DeliveryOutcome, WebhookDelivery)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        try await store.recordDeliveries(outcomes.map(\.0), claimant: claimant)
        try await disableExpired(outcomes)
        return claimed.count
    }

    /// Endpoint `id`'s target and current secrets, or why none can be sent to.
    private func route(_ id: String, at: Date) async -> Result<Route, WebhookEndpointError> {
        do {
            guard let endpoint = try await store.webhookEndpoint(id: id), endpoint.removedAt == nil else {
                return .failure(WebhookEndpointError("the endpoint was removed"))
            }
            var secrets = [try sealer.open(endpoint.secret, endpointID: id, signing: endpoint.signing)]
            if let previous = endpoint.previousSecret, let until = endpoint.previousUntil, until > at {
                // A previous secret that no longer opens (sealed under a key
                // since lost) cannot block the current one: it is left out.
                do {
                    secrets.append(try sealer.open(previous, endpointID: id, signing: endpoint.signing))
                } catch {
                    logger.warning("webhook endpoint \(id): its previous secret does not open (\(error)); deliveries are signed with the current one only")
                }
            }
            return .success(Route(endpoint: endpoint, target: try WebhookTarget(endpoint.url), secrets: secrets))
        } catch let error as WebhookEndpointError {
            return .failure(error)
        } catch {
            return .failure(WebhookEndpointError("\(error)"))
        }
    }

    private func send(_ delivery: WebhookDelivery, via route: Result<Route, WebhookEndpointError>) async -> DeliveryOutcome {
        let failure: String
        switch route {
        case .failure(let error):
            failure = error.message
        case .success(let route):
            failure = await post(delivery, via: route) ?? ""
        }
        let at = now()
        configuration.observer.tried(delivery.endpointID, failure.isEmpty)
        guard !failure.isEmpty else {
            return DeliveryOutcome(endpointID: delivery.endpointID, sessionID: delivery.sessionID, number: delivery.number, at: at, failure: nil)
        }
        var generator = SystemRandomNumberGenerator()
        let retryAt = at.addingTimeInterval(configuration.schedule.delay(delivery.tries + 1, using: &generator).seconds)
        logger.warning("webhook \(delivery.webhookID) (\(delivery.type)) to \(delivery.endpointID) failed on try \(delivery.tries + 1): \(failure); next try at \(WireDate.string(retryAt))")
        return DeliveryOutcome(endpointID: delivery.endpointID, sessionID: delivery.sessionID, number: delivery.number, at: at,
                               failure: .init(reason: String(failure.prefix(500)), retryAt: retryAt))
    }

    /// POSTs `delivery`; nil when the endpoint took it (a 2xx in time), else why not.
    private func post(_ delivery: WebhookDelivery, via route: Route) async -> String? {
        let named: Set<String>
        do {
            named = try await route.target.check(allowPrivate: configuration.allowPrivate, resolve: resolve)
        } catch {
            return "refused before sending: \(error.message)"
        }
        var tls = EgressTLS()
        tls.namedAddresses = named
        let retained = pools.withLock { $0.insert(tls).inserted }
        if retained { client.retain(tls) }
        let timestamp = Int64(now().timeIntervalSince1970)
        var headers = StandardWebhooks.headers(id: delivery.webhookID, timestamp: timestamp, body: delivery.body, secrets: route.secrets)
        headers.append((name: "user-agent", value: "gateway-webhooks/1"))
        let request = EgressHTTPRequest(method: "POST", url: route.target.url,
                                        endpoint: Manifest.Endpoint(host: route.target.host, port: route.target.port),
                                        headers: headers, body: delivery.body, timeout: configuration.timeout)
        do {
            let response = try await client.send(request, tls: tls)
            return (200..<300).contains(response.status) ? nil : "answered HTTP \(response.status)"
        } catch {
            return "\(error)"
        }
    }

    /// Disables each endpoint one of whose deliveries has failed for longer than the window.
    private func disableExpired(_ outcomes: [(DeliveryOutcome, WebhookDelivery)]) async throws {
        let window = configuration.schedule.window.seconds
        var expired: Set<String> = []
        for (outcome, delivery) in outcomes where outcome.failure != nil {
            let since = delivery.failingSince ?? outcome.at
            if outcome.at.timeIntervalSince(since) > window { expired.insert(delivery.endpointID) }
        }
        for id in expired {
            guard var endpoint = try await store.webhookEndpoint(id: id), endpoint.state == .enabled else { continue }
            endpoint.state = .disabled
            endpoint.stateReason = "its deliveries failed for longer than the retry window (\(Int(window)) s); its events are kept, and delivered in order once it is enabled"
            try await store.updateWebhookEndpoint(endpoint, at: now())
            logger.error("webhook endpoint \(id) disabled: \(endpoint.stateReason!)")
        }
    }
}

/// How deliveries are made (`gateway serve --webhook-…`; docs/webhooks.md).
public struct WebhookConfiguration: Sendable {
    /// How long an endpoint has to answer a delivery with a 2xx.
    public var timeout: Duration = .seconds(10)
    public var schedule: RetrySchedule = .standard
    /// Whether endpoints on addresses that are not public are allowed (local development).
    public var allowPrivate = false
    /// How long delivered deliveries are kept (replay reaches back this far).
    public var retention: Duration = .seconds(30 * 86_400)
    /// How often the loops look without being woken (other hosts' commits, retries).
    public var poll: Duration = .seconds(1)
    /// Events read per fan-out step; deliveries claimed per round.
    public var fanOutPage = 500
    public var sendBatch = 64
    /// Told of every try and, every ``reportInterval``, of each endpoint's queue (metrics).
    public var observer = WebhookObserver()
    public var reportInterval: Duration = .seconds(5)
    /// A claim lasts the timeout plus this: a try still in flight is never
    /// claimed by another host, and one whose host died is claimed again
    /// this long after its timeout.
    public var leaseMargin: Duration = .seconds(5)

    public init() {}
}


/// What metrics are told of deliveries (`gateway serve` gives `/metrics`'s).
public struct WebhookObserver: Sendable {
    /// A try of a delivery to `endpoint` ended: delivered, or failed.
    public var tried: @Sendable (_ endpoint: String, _ delivered: Bool) -> Void
    /// How `endpoint`'s deliveries stand at `now`.
    public var queued: @Sendable (_ endpoint: String, _ counts: DeliveryCounts, _ now: Date) -> Void

    public init(tried: @escaping @Sendable (_ endpoint: String, _ delivered: Bool) -> Void = { _, _ in },
                queued: @escaping @Sendable (_ endpoint: String, _ counts: DeliveryCounts, _ now: Date) -> Void = { _, _, _ in }) {
        self.tried = tried
        self.queued = queued
    }
}
