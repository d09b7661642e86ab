import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PluginHost
import Synchronization

/// Delivers the outbox to merchants' endpoints (docs/webhooks.md).
///
/// - **Fan-out, and sending at once.** Woken when commits land
///   (``committed(_:events:)``) and at least every
///   ``WebhookConfiguration/poll``, a pump per endpoint (one host's at a
///   time: ``WebhookStore/leaseFanOut``) reads the feed after the
///   endpoint's cursor (its mode, its types) and sends that stretch at once:
///   each session's events in order, sessions side by side. Each body is
///   made once (the event and the session right after it:
///   ``DeliveryMaker``). What was delivered is only counted; what was not
///   (a failed try and its session's events behind it, a session with a
///   delivery already pending, everything of a disabled endpoint) becomes a
///   delivery row, and the cursor moves past the stretch in the same
///   transaction (``WebhookStore/advance``): a healthy endpoint costs the
///   store one write per stretch. One endpoint that hangs or fails holds
///   back no other.
/// - **Retries.** The rows are sent by a second loop: up to
///   ``WebhookConfiguration/sendBatch`` in flight at once, each claimed
///   with a lease and recorded as soon as it ends (outcomes that end
///   together are written together). Only the first undelivered event of
///   each session is ever claimed for an endpoint, so a session's events
///   arrive in order while other sessions' keep flowing. A try that fails is
///   retried on the ``RetrySchedule``. Past its window a delivery is given
///   up when its endpoint took others since it began failing (its session's
///   later events then go on), and otherwise its endpoint is disabled, its
///   events kept.
///
/// Every try is a POST signed as Standard Webhooks define, through the
/// host's egress client with its TLS rules and address checks (the name
/// resolved on the webhooks' own resolver threads, in bounded time); a 2xx
/// within the timeout delivers it.
///
/// On a store several hosts share, one host fans each endpoint out at a
/// time and each row is claimed by one host at a time; what a host that died
/// mid-stretch or mid-try was sending is sent again by another when its
/// lease ends (at least once, always; once, normally).
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
    private let states = CommittedStates()
    private let fanOutBell = Doorbell()
    private let sendBell = Doorbell()
    private let loops = Mutex<[Task<Void, Never>]>([])
    /// The pools retained in the egress client, by the addresses they may reach.
    private let pools = Mutex<Set<EgressTLS>>([])
    private let flight = Mutex(Flight())
    private let pumps = Mutex(Pumps())
    /// What was logged once (a stuck endpoint's fan-out, an unreadable previous secret).
    private let said = Mutex<Set<String>>([])

    /// Each endpoint's pump while it runs, and those asked to look once more.
    private struct Pumps {
        var running: [String: Task<Void, Never>] = [:]
        var again: Set<String> = []
        /// The stretches' workers (a try left in flight outlives its pump's stretch).
        var workers: [UInt64: Task<Void, Never>] = [:]
        var nextWorker: UInt64 = 0
        /// Per endpoint, its tries left in flight by stretches and not yet ended.
        var detached: [String: Int] = [:]
        /// Set by ``stop()``: no pump or worker starts any more.
        var stopping = false
    }

    /// The tries in flight, and the outcomes not yet written.
    private struct Flight {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var next: UInt64 = 0
        var ended: [(outcome: DeliveryOutcome, delivery: WebhookDelivery)] = []
    }

    public init(store: any WebhookStore & CheckoutStore, sealer: SecretSealer, configuration: WebhookConfiguration = .init(),
                logger: Logger = Logger(label: "gateway.webhooks"), now: @escaping @Sendable () -> Date = { Date() },
                client: AsyncHTTPEgressClient? = nil, resolve: (@Sendable (String) async throws -> [String])? = nil) {
        self.store = store
        self.sessions = store
        self.sealer = sealer
        self.configuration = configuration
        self.logger = logger
        self.now = now
        // The answer's body is not read: a 2xx with a large page is still a 2xx, up to this much.
        self.client = client ?? AsyncHTTPEgressClient(connectionsPerHost: 8, maximumResponseBytes: 1 << 20)
        self.ownsClient = client == nil
        if let resolve {
            self.resolve = resolve
        } else {
            let resolver = WebhookResolver(timeout: configuration.resolveTimeout)
            self.resolve = { try await resolver.resolve($0) }
        }
        self.key = SealingKeyAgreement(store: store, sealer: sealer)
        self.claimant = "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8))"
    }

    /// Starts both loops, once.
    public func start() {
        loops.withLock { loops in
            guard loops.isEmpty else { return }
            pumps.withLock { $0.stopping = false }
            loops.append(Task { [self] in await fanOutLoop() })
            loops.append(Task { [self] in await sendLoop() })
        }
    }

    /// A commit of this host landed: `session` as it left it, `events` as
    /// stored. Remembered for the deliveries' bodies, then fan out.
    ///
    /// With no endpoint (as the last fan-out found) this costs a commit one
    /// atomic load: nothing is remembered and no loop is woken (an endpoint
    /// registered since is found by the next poll, or at once when it was
    /// registered through this host: ``due()``).
    public func committed(_ session: Session, events: [SessionEvent]) {
        guard states.wanted else { return }
        states.remember(session, events: events)
        fanOutBell.ring()
    }

    /// Something changed in the endpoints (one registered or enabled, a
    /// replay): fan out and send now.
    public func due() {
        // Until the fan-out looks, take it that some endpoint now wants events.
        states.wanted = true
        fanOutBell.ring()
        sendBell.ring()
    }

    /// Stops both loops and the tries in flight (a try cut short is sent
    /// again once its lease ends: at least once).
    public func stop() async {
        await Self.cancelAndWait(loops.withLock { loops in defer { loops.removeAll() }; return loops })
        // The pumps first: each writes what its stretch came to (its tries in flight claimed), then the workers.
        await Self.cancelAndWait(pumps.withLock { pumps in
            pumps.stopping = true
            defer { pumps.running.removeAll() }
            return Array(pumps.running.values)
        })
        await Self.cancelAndWait(pumps.withLock { pumps in defer { pumps.workers.removeAll() }; return Array(pumps.workers.values) })
        await Self.cancelAndWait(flight.withLock { flight in defer { flight.tasks.removeAll() }; return Array(flight.tasks.values) })
        // What the tries that ended since the sending loop stopped came to (the rows stay claimed otherwise, and are sent again after their lease).
        let ended = flight.withLock { flight in defer { flight.ended.removeAll() }; return flight.ended }
        if !ended.isEmpty {
            do {
                try await store.recordDeliveries(ended.map(\.outcome), claimant: claimant)
            } catch {
                logger.warning("webhooks: the outcomes of \(ended.count) tries could not be recorded while stopping (\(error)); they are sent again when their claims end")
            }
        }
        // Another host may fan this one's endpoints out at once, not after the lease.
        do {
            try await store.releaseFanOut(claimant: claimant)
        } catch {
            logger.warning("webhooks: the fan-out leases of \(claimant) could not be released (\(error)); other hosts take them when they end")
        }
        let retained = pools.withLock { pools in defer { pools.removeAll() }; return pools }
        if ownsClient {
            await client.shutdown()
        } else {
            for tls in retained { await client.release(tls) }
        }
    }

    private static func cancelAndWait(_ tasks: [Task<Void, Never>]) async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Logs `message` the first time `key` is said (until ``unsay(_:)``).
    private func sayOnce(_ key: String, _ message: @autoclosure () -> String) {
        if said.withLock({ $0.insert(key).inserted }) { logger.warning("\(message())") }
    }

    private func unsay(_ key: String) {
        said.withLock { _ = $0.remove(key) }
    }

    // MARK: Fan-out

    /// Lists the endpoints, starts a pump for each (``pump(_:)``), reports
    /// their queues to the metrics and prunes, at each ring and poll.
    private func fanOutLoop() async {
        var lastPrune = Date.distantPast
        var lastReport = Date.distantPast
        var failures = 0
        while !Task.isCancelled {
            do {
                let endpoints = try await store.webhookEndpoints()
                states.wanted = !endpoints.isEmpty
                for endpoint in endpoints { startPump(endpoint.id) }
                let at = now()
                if at.timeIntervalSince(lastReport) >= configuration.reportInterval.seconds {
                    lastReport = at
                    for endpoint in endpoints {
                        configuration.observer.queued(endpoint.id, try await store.deliveryCounts(endpoint: endpoint.id), at)
                    }
                }
                if at.timeIntervalSince(lastPrune) > 3600 {
                    lastPrune = at
                    let pruned = try await store.pruneDeliveries(before: at.addingTimeInterval(-configuration.retention.seconds))
                    if pruned > 0 { logger.info("webhooks: \(pruned) deliveries older than the retention pruned") }
                }
                if failures > 0 { unsay("fan-out") }
                failures = 0
            } catch is CancellationError {
                return
            } catch {
                // A store that keeps failing is not asked again at every commit.
                failures += 1
                sayOnce("fan-out", "webhooks: reading the endpoints failed, tried again with back-off: \(error)")
                try? await Task.sleep(for: .milliseconds(min(100 << min(failures, 10), 10_000)))
            }
            await fanOutBell.wait(timeout: configuration.poll)
        }
    }

    /// Starts endpoint `id`'s pump, or, when it runs, has it look once more
    /// when it is done (a commit it may have missed).
    private func startPump(_ id: String) {
        pumps.withLock { pumps in
            guard !pumps.stopping else { return }
            guard pumps.running[id] == nil else {
                pumps.again.insert(id)
                return
            }
            pumps.running[id] = Task { [self] in await pumpLoop(id) }
        }
    }

    /// Pumps endpoint `id` until it is caught up and nothing rang meanwhile;
    /// a pump that fails backs off and tries again (its endpoint's feed
    /// waits; the other endpoints' pumps go on).
    private func pumpLoop(_ id: String) async {
        var failures = 0
        while !Task.isCancelled {
            do {
                if try await pump(id) > 0 { sendBell.ring() }
                if failures > 0 { unsay("fan-out \(id)") }
                failures = 0
            } catch is CancellationError {
                break
            } catch {
                failures += 1
                sayOnce("fan-out \(id)", "webhooks: the events of endpoint \(id) could not be sent or queued, tried again with back-off: \(error)")
                try? await Task.sleep(for: .milliseconds(min(100 << min(failures, 10), 10_000)))
            }
            let again = pumps.withLock { pumps in
                if pumps.again.remove(id) != nil || failures > 0 { return true }
                pumps.running[id] = nil
                return false
            }
            if !again { return }
        }
        pumps.withLock { pumps in
            pumps.running[id] = nil
            pumps.again.remove(id)
        }
    }

    /// Sends endpoint `id`'s new events, a stretch of the feed at a time,
    /// while this host holds its fan-out lease (``sendAtOnce``), the endpoint
    /// read again at each (a disabled one sends nothing: its events are
    /// queued). The cursor moves past the stretch with its rows and counts in
    /// one transaction (``WebhookStore/advance``), written even when the
    /// deliverer is stopping (what was sent is not sent again). A host whose
    /// sealing key differs takes no lease: the feed waits for a host that
    /// can sign. Answers how many rows it queued.
    func pump(_ id: String) async throws -> Int {
        guard (try? await key.ensure()) != nil else { return 0 }
        let maker = DeliveryMaker(sessions: sessions, states: states) { [self] session, error in
            sayOnce("session \(session)", "webhooks: session \(session) cannot be read (\(error)); its events are delivered without it")
        }
        var queued = 0
        while true {
            try Task.checkCancellation()
            let at = now()
            guard try await store.leaseFanOut(endpoint: id, claimant: claimant, at: at,
                                               until: at.addingTimeInterval(configuration.fanOutLease.seconds)) else {
                return queued  // another host fans it out
            }
            // Read under the lease: its cursor is where the last holder left it.
            guard let endpoint = try await store.webhookEndpoint(id: id), endpoint.removedAt == nil else { return queued }
            let cursor = endpoint.cursor
            let page = try await store.feed(after: cursor, mode: endpoint.mode, types: endpoint.types.map(Set.init), limit: configuration.fanOutPage)
            guard page.next != cursor else { return queued }
            let made = try await maker.deliveries(page.events, endpoint: id, at: at)
            var stretch: Stretch?
            var sent = SentStretch(queue: made)
            if endpoint.state == .enabled, !made.isEmpty {
                (stretch, sent) = await sendAtOnce(made, endpoint: id, at: at)
            }
            // Not cut short by a stop: what was sent is recorded, and what is in flight claimed.
            let store = self.store, claimant = self.claimant, until = now().addingTimeInterval(configuration.lease.seconds)
            let advance = Task { [sent, next = page.next] in
                try await store.advance(endpoint: id, from: cursor, to: next, sent, claimant: claimant, until: until)
            }
            let advanced: Bool
            do {
                advanced = try await advance.value
            } catch {
                _ = stretch?.settle(advanced: false)
                throw error
            }
            handOff(stretch?.settle(advanced: advanced) ?? [])
            guard advanced else { return queued }  // another host advanced it first
            queued += sent.queue.count + sent.inFlight.count
            if !page.more { return queued }
        }
    }

    /// Sends a stretch's deliveries at once: each session's in order (after
    /// a failure its session's later ones are queued behind it), at most
    /// ``WebhookConfiguration/sendBatch`` of the endpoint's tries in flight
    /// (those left in flight by earlier stretches count), those of a session
    /// with a delivery already pending queued behind it. Returns when all
    /// ended or after the linger, with the tries still in flight left
    /// running (``Stretch``).
    private func sendAtOnce(_ made: [WebhookDelivery], endpoint id: String, at: Date) async -> (Stretch?, SentStretch) {
        var order: [String] = []
        var chains: [String: [WebhookDelivery]] = [:]
        for delivery in made {
            if chains[delivery.sessionID] == nil { order.append(delivery.sessionID) }
            chains[delivery.sessionID, default: []].append(delivery)
        }
        let blocked: Set<String>
        do {
            blocked = try await store.pendingSessions(endpoint: id, among: order)
        } catch {
            return (nil, SentStretch(queue: made))  // not known which sessions wait: all queued, in order
        }
        let via: Result<Ready, WebhookEndpointError>
        switch await route(id, at: at) {
        case .unavailable:
            return (nil, SentStretch(queue: made))  // the endpoint could not be read: queued, for the retry loop
        case .ready(let ready):
            via = ready
        }
        let unblocked = order.filter { !blocked.contains($0) }
        let stretch = Stretch(unblocked.map { chains[$0]! }) { [self] in
            pumps.withLock { $0.detached[id, default: 0] -= 1 }
        }
        var started = 0
        pumps.withLock { pumps in
            guard !pumps.stopping else { return }
            let free = configuration.sendBatch - pumps.detached[id, default: 0]
            for worker in 0..<max(0, min(free, unblocked.count)) {
                stretch.workerStarts()
                started += 1
                let key = pumps.nextWorker
                pumps.nextWorker += 1
                pumps.workers[key] = Task { [self] in
                    await work(worker, on: stretch, via: via)
                    stretch.workerDone()
                    _ = self.pumps.withLock { $0.workers.removeValue(forKey: key) }
                }
            }
        }
        // Waited in full even when stopping: the answers that come within it are recorded with the stretch.
        if started > 0 { await Task { [linger = configuration.linger] in await stretch.done.wait(timeout: linger) }.value }
        var sent = stretch.detach()
        if !sent.inFlight.isEmpty {
            let count = sent.inFlight.count
            pumps.withLock { $0.detached[id, default: 0] += count }
        }
        for session in order where blocked.contains(session) { sent.queue += chains[session]! }
        return (stretch, sent)
    }

    /// One worker of a stretch: tries its deliveries, each chain in order.
    private func work(_ worker: Int, on stretch: Stretch, via route: Result<Ready, WebhookEndpointError>) async {
        while !Task.isCancelled, let delivery = stretch.next(worker) {
            let outcome = await send(delivery, via: route)
            switch stretch.ended(worker, delivery, outcome) {
            case .next: continue
            case .handOff:
                handOff([(outcome, delivery)])
                return
            case .stop: return
            }
        }
    }

    /// Outcomes of tries a stretch left in flight, to be written by the retry loop.
    private func handOff(_ ended: [(outcome: DeliveryOutcome, delivery: WebhookDelivery)]) {
        guard !ended.isEmpty else { return }
        flight.withLock { $0.ended += ended }
        sendBell.ring()
    }

    // MARK: Sending

    private func sendLoop() async {
        var refused = false
        var failures = 0
        while !Task.isCancelled {
            var worked = false
            do {
                // Nothing is claimed under a key that cannot open the secrets (said once).
                do {
                    try await key.ensure()
                    refused = false
                } catch let mismatch as SealingKeyAgreement.Mismatch {
                    if !refused { logger.error("webhooks: \(mismatch)") }
                    refused = true
                    try await Task.sleep(for: configuration.poll * 10)
                    continue
                }
                worked = try await turn()
                failures = 0
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                logger.warning("webhooks: a delivery round failed, tried again with back-off: \(error)")
                try? await Task.sleep(for: .milliseconds(min(100 << min(failures, 10), 10_000)))
            }
            if !worked { await sendBell.wait(timeout: configuration.poll) }
        }
    }

    /// One turn: writes the outcomes of the tries that ended and claims as
    /// many due deliveries as there are free slots, in one store call, then
    /// starts their tries; answers whether it did anything.
    private func turn() async throws -> Bool {
        let ended = flight.withLock { flight in defer { flight.ended.removeAll() }; return flight.ended }
        let free = configuration.sendBatch - flight.withLock { $0.tasks.count }
        guard !ended.isEmpty || free > 0 else { return false }
        let at = now()
        let outcomes: [DeliveryOutcome]
        let claimed: [WebhookDelivery]
        do {
            outcomes = try await settleExpired(ended)
            claimed = try await store.recordThenClaim(outcomes, claimant: claimant, at: at, limit: max(free, 0),
                                                      until: at.addingTimeInterval(configuration.lease.seconds))
        } catch {
            // Not written: put back, to be written with the next ones (their claims hold meanwhile).
            flight.withLock { $0.ended = ended + $0.ended }
            throw error
        }
        guard !claimed.isEmpty else { return !outcomes.isEmpty }
        var routes: [String: Route] = [:]
        for id in Set(claimed.map(\.endpointID)) {
            routes[id] = await route(id, at: at)
        }
        for delivery in claimed {
            guard let route = routes[delivery.endpointID], case .ready(let ready) = route else {
                // The endpoint could not be read (the store): no try is made or counted; its claim ends by itself.
                continue
            }
            flight.withLock { flight in
                let id = flight.next
                flight.next += 1
                flight.tasks[id] = Task { [self] in
                    let outcome = await send(delivery, via: ready)
                    self.flight.withLock { flight in
                        flight.tasks[id] = nil
                        flight.ended.append((outcome, delivery))
                    }
                    sendBell.ring()
                }
            }
        }
        return true
    }

    /// One endpoint as a round sends to it: where, with which secrets and
    /// the addresses it may reach, or why it cannot be sent to.
    private enum Route {
        case ready(Result<Ready, WebhookEndpointError>)
        /// The store did not answer, or the endpoint was disabled since: nothing is tried.
        case unavailable
    }

    private struct Ready {
        var target: WebhookTarget
        var secrets: [WebhookSecret]
        var tls: EgressTLS
    }

    /// Endpoint `id`'s route, its name resolved once for all its deliveries of the round.
    private func route(_ id: String, at: Date) async -> Route {
        let endpoint: WebhookEndpointRecord
        do {
            guard let found = try await store.webhookEndpoint(id: id), found.removedAt == nil else {
                return .ready(.failure(WebhookEndpointError("the endpoint was removed")))
            }
            endpoint = found
            // Disabled since it was read (the claim's or the stretch's read): it is sent nothing, its events wait.
            guard found.state == .enabled else { return .unavailable }
        } catch {
            sayOnce("route \(id)", "webhooks: endpoint \(id) could not be read (\(error)); its deliveries wait for their claims to end")
            return .unavailable
        }
        do {
            var secrets = [try sealer.open(endpoint.secret, endpointID: id, signing: endpoint.signing)]
            if let previous = endpoint.previousSecret, let until = endpoint.previousUntil, until > at {
                // A previous secret that no longer opens (sealed under a key
                // since lost) cannot block the current one: it is left out.
                do {
                    secrets.append(try sealer.open(previous, endpointID: id, signing: endpoint.signing))
                } catch {
                    sayOnce("previous \(id)", "webhook endpoint \(id): its previous secret does not open (\(error)); deliveries are signed with the current one only")
                }
            }
            let target = try WebhookTarget(endpoint.url)
            var tls = EgressTLS()
            do {
                tls.namedAddresses = try await target.check(allowPrivate: configuration.allowPrivate, resolve: resolve)
            } catch {
                return .ready(.failure(WebhookEndpointError("refused before sending: \(error.message)")))
            }
            // Retained once per set of addresses (under the lock: a send never finds its pool missing).
            pools.withLock { pools in
                if pools.insert(tls).inserted { client.retain(tls) }
            }
            return .ready(.success(Ready(target: target, secrets: secrets, tls: tls)))
        } catch let error as WebhookEndpointError {
            return .ready(.failure(error))
        } catch {
            return .ready(.failure(WebhookEndpointError("\(error)")))
        }
    }

    private func send(_ delivery: WebhookDelivery, via route: Result<Ready, WebhookEndpointError>) async -> DeliveryOutcome {
        let failure: String
        switch route {
        case .failure(let error):
            failure = error.message
        case .success(let ready):
            failure = await post(delivery, via: ready) ?? ""
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
    private func post(_ delivery: WebhookDelivery, via route: Ready) async -> String? {
        let timestamp = Int64(now().timeIntervalSince1970)
        var headers = StandardWebhooks.headers(id: delivery.webhookID, timestamp: timestamp, body: delivery.body, secrets: route.secrets)
        headers.append((name: "user-agent", value: "gateway-webhooks/1"))
        let request = EgressHTTPRequest(method: "POST", url: route.target.url,
                                        endpoint: Manifest.Endpoint(host: route.target.host, port: route.target.port),
                                        headers: headers, body: delivery.body, timeout: configuration.timeout)
        do {
            let response = try await client.send(request, tls: route.tls)
            return (200..<300).contains(response.status) ? nil : "answered HTTP \(response.status)"
        } catch {
            // The egress client speaks to adapters (statuses, "the provider may have acted"): said here for a merchant's endpoint.
            return error.message.replacingOccurrences(of: "; the provider may have acted on it", with: "")
        }
    }

    /// The outcomes to write, each failure past the window settled: given up
    /// when its endpoint took other deliveries since it began failing (so
    /// one event the merchant always refuses holds back its session's later
    /// events no longer than the window), else its endpoint, which took
    /// nothing all that time, is disabled (its events kept, delivered in
    /// order once it is enabled).
    private func settleExpired(_ ended: [(outcome: DeliveryOutcome, delivery: WebhookDelivery)]) async throws -> [DeliveryOutcome] {
        let window = configuration.schedule.window.seconds
        var outcomes: [DeliveryOutcome] = []
        var lastTaken: [String: Date?] = [:]
        for (outcome, delivery) in ended {
            guard var failure = outcome.failure, outcome.at.timeIntervalSince(delivery.failingSince ?? outcome.at) > window else {
                outcomes.append(outcome)
                continue
            }
            if lastTaken[delivery.endpointID] == nil {
                lastTaken[delivery.endpointID] = .some(try await store.deliveryCounts(endpoint: delivery.endpointID).lastDelivered)
            }
            if let taken = lastTaken[delivery.endpointID] ?? nil, taken >= delivery.failingSince ?? outcome.at {
                failure.giveUp = true
                logger.error("webhook \(delivery.webhookID) to \(delivery.endpointID) given up after failing for longer than the retry window (\(Int(window)) s) while the endpoint took others; replay it once fixed")
            } else {
                try await disable(delivery.endpointID, window: window)
            }
            var settled = outcome
            settled.failure = failure
            outcomes.append(settled)
        }
        return outcomes
    }

    private func disable(_ id: String, window: Double) async throws {
        guard let endpoint = try await store.webhookEndpoint(id: id), endpoint.state == .enabled, endpoint.removedAt == nil else { return }
        var disabled = endpoint
        disabled.state = .disabled
        disabled.stateReason = "it took no delivery for longer than the retry window (\(Int(window)) s); its events are kept, and delivered in order once it is enabled"
        // Changed since it was read (removed, rotated, disabled by ops): left as it now is.
        if try await store.updateWebhookEndpoint(disabled, from: endpoint, at: now()) {
            logger.error("webhook endpoint \(id) disabled: \(disabled.stateReason!)")
        }
    }
}
