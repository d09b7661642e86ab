import CheckoutEngine
import Foundation
import MerchantWebhooks
import GatewayPayloads
import Logging
import PaymentFields
import PluginHost
internal import SQLiteCheckoutStore
import ServiceLifecycle
import Synchronization

/// The gateway as a library: the plugin host (manifests, adapters), the
/// checkout engine and its store, and reconciliation, in one value an app
/// holds. It is a swift-service-lifecycle `Service`: put it in the app's
/// `ServiceGroup`, and `run()` reconciles in the background until graceful
/// shutdown, then drains the adapters and closes the store.
///
/// It is the one API an embedder, the HTTP layer (`CheckoutHTTP`) and the
/// CLI use: the checkout operations, the providers' statuses
/// (``providerReport()``), readiness, enable and disable, reload, the API
/// keys, held operations. Its parts (the engine, the adapters, the store,
/// the manifests reloader) are `@_spi(Internals)`: for the suite and the
/// benchmarks, never for a caller.
///
/// ```swift
/// let gateway = try await PaymentGateway.open(configuration: .init(manifests: "manifests", data: ".gateway"))
/// let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"))
/// let attempt = try await gateway.attempt(session: session.session.id, NewAttempt(method: "mada"), idempotencyKey: "o-1-pay")
/// ```
public final class PaymentGateway: Service, Sendable {
    public struct Configuration: Sendable {
        /// The folder of provider manifests.
        public var manifests: URL
        /// Where the host keeps its state: `checkout.sqlite` and `plugins/`.
        public var data: URL
        /// Where the private copies of adapter libraries are kept (named by
        /// their SHA-256, so several hosts may share one folder); `data/plugins` when nil.
        public var libraries: URL?
        /// The engine's store (and the API keys'): any value of the engine's
        /// store protocols; SQLite at `data/checkout.sqlite` when nil. The
        /// library's API names no storage engine: SQLite is an internal default.
        /// The gateway runs the store it is given: ``PaymentGateway/shutdown()``
        /// closes it, so give each gateway its own.
        public var store: (any CheckoutStore & APIKeyStore)?
        public var checkout = CheckoutConfiguration()
        /// Time between reconciliation passes.
        public var reconcileInterval: Duration = .seconds(1)
        /// How long adapters get to finish their calls at shutdown.
        public var shutdownGrace: Duration = .seconds(10)
        /// Sandbox mode: manifests with a `sandbox` block run against the
        /// provider simulators (``SandboxOverlay``); nil in production.
        public var sandbox: SandboxOverlay?
        /// Told of every adapter call (provider, operation, time taken, how it
        /// ended), for metrics.
        public var callObserver: AdapterCallObserver?
        /// What adapters' `wallet_decrypt` trusts (Apple Root CA - G3, five
        /// minutes, the clock); tests give a test root and a fixed "now".
        public var wallets = WalletSettings()
        /// How long a verified API key is trusted without asking the store again (``APIKeys``).
        public var keyCache: Duration = .seconds(1)
        /// How merchants' webhooks are delivered (docs/webhooks.md).
        public var webhooks = WebhookConfiguration()
        /// Where the key that seals webhook signing secrets is kept;
        /// `data/webhook-secrets.key` when nil. Every host sharing a store
        /// needs the same key.
        public var webhookKey: URL?

        public init(manifests: String, data: String) {
            self.manifests = URL(fileURLWithPath: manifests, isDirectory: true)
            self.data = URL(fileURLWithPath: data, isDirectory: true)
        }
    }

    public let configuration: Configuration
    /// The API keys of merchants' backends, kept in the gateway's store.
    public let keys: APIKeys
    @_spi(Internals) public let checkout: Checkout
    @_spi(Internals) public let providers: HostedProviders
    @_spi(Internals) public let store: any CheckoutStore & APIKeyStore
    /// Applies the manifests folder as it now is (live reload).
    @_spi(Internals) public let manifests: ManifestReloader
    /// Merchants' webhook endpoints, when the store keeps them (both shipped stores do).
    public let webhooks: WebhookEndpoints?
    @_spi(Internals) public let deliverer: WebhookDeliverer?
    let logger: Logger
    /// The one shutdown: a second call waits for it.
    private let closing = Mutex<Task<Void, Never>?>(nil)

    /// ``init(configuration:logger:)`` for async code: opening the store and
    /// loading the adapters (their code, an isolated adapter's runner
    /// starting) run on a queue of their own (``OffThePool``), never on a
    /// Swift concurrency thread.
    public static func open(configuration: Configuration, logger: Logger = Logger(label: "gateway")) async throws -> PaymentGateway {
        try await OffThePool.run("gateway-open") { try PaymentGateway(configuration: configuration, logger: logger) }
    }

    /// Opens the store and loads every manifest. A manifest or adapter that
    /// fails is refused on its own (see ``providerRecords``); only an
    /// unreadable manifests folder or store stops the gateway. It loads on the
    /// caller's thread (reading and hashing every library, running adapters'
    /// `create`, waiting for isolated adapters' runners), which async code
    /// must never do: a Swift concurrency thread held for that long is one of
    /// the few every task of the process shares. From async code, call
    /// ``open(configuration:logger:)``.
    @available(*, noasync, message: "loads adapters on the calling thread; use PaymentGateway.open(configuration:logger:)")
    public init(configuration: Configuration, logger: Logger = Logger(label: "gateway")) throws {
        self.configuration = configuration
        self.logger = logger
        let store = try configuration.store ?? SQLiteCheckoutStore(path: configuration.data.appendingPathComponent("checkout.sqlite").path)
        self.store = store
        keys = APIKeys(store: store, cacheFor: configuration.keyCache)
        var loader = AdapterLoader(store: LibraryStore(directory: configuration.libraries ?? configuration.data.appendingPathComponent("plugins")), logger: logger)
        loader.wallets = configuration.wallets
        providers = HostedProviders(observer: configuration.callObserver)
        manifests = ManifestReloader(directory: configuration.manifests, loader: loader, providers: providers,
                                     sandbox: configuration.sandbox, logger: logger)
        try manifests.reloadNow()
        let fingerprintKey = try SecretKeyFile.load(configuration.data.appendingPathComponent("idempotency.key"))
        if let outbox = store as? any WebhookStore & CheckoutStore {
            let sealer = try SecretSealer(key: SecretSealer.loadKey(at: configuration.webhookKey ?? configuration.data.appendingPathComponent("webhook-secrets.key")))
            // One resolver (threads of the webhooks' own, each lookup bounded) for registrations and deliveries.
            let resolver = WebhookResolver(timeout: configuration.webhooks.resolveTimeout)
            let resolve: @Sendable (String) async throws -> [String] = { try await resolver.resolve($0) }
            let deliverer = WebhookDeliverer(store: outbox, sealer: sealer, configuration: configuration.webhooks,
                                             logger: Logger(label: "gateway.webhooks"), resolve: resolve)
            self.deliverer = deliverer
            webhooks = WebhookEndpoints(store: outbox, sealer: sealer, allowPrivate: configuration.webhooks.allowPrivate,
                                        retention: configuration.webhooks.retention, resolve: resolve,
                                        changed: { deliverer.due() })
        } else {
            deliverer = nil
            webhooks = nil
        }
        let deliverer = self.deliverer
        checkout = Checkout(store: store, providers: providers, fingerprintKey: fingerprintKey, configuration: configuration.checkout, logger: logger,
                            committed: { session, events in deliverer?.committed(session, events: events) })
    }

    /// What became of each manifest.
    @_spi(Internals) public var providerRecords: [ProviderRecord] { providers.records }

    /// The digest of every manifest this host has applied
    /// (``ManifestDigest/host(_:)`` of ``providerRecords``): two hosts over
    /// the same manifests report the same value, whatever their load order;
    /// a host whose digest differs from the others' has not applied the same
    /// manifests.
    public var manifestsDigest: String { ManifestDigest.host(providerRecords) }

    /// Reconciles until graceful shutdown (or cancellation), then stops the
    /// adapters, letting their calls in flight finish within the grace period.
    public func run() async throws {
        let reconciler = Reconciler(checkout: checkout, interval: configuration.reconcileInterval)
        logger.info("gateway running: \(providers.profiles().filter(\.enabled).count) providers enabled")
        deliverer?.start()
        await cancelWhenGracefulShutdown { await reconciler.run() }
        await shutdown()
    }

    /// Stops reloading manifests (a reload in flight is waited for, and any
    /// later one loads nothing), then every adapter (waiting for calls in
    /// flight, up to the grace period): no adapter instance, and no runner,
    /// outlives it. Then it closes the store. A second call waits for the first.
    public func shutdown() async {
        let task = closing.withLock { closing in
            if let running = closing { return running }
            let (manifests, providers, store, grace) = (self.manifests, self.providers, self.store, configuration.shutdownGrace)
            let deliverer = self.deliverer
            let task = Task {
                await deliverer?.stop()
                await manifests.close(grace: grace)
                await providers.close(grace: grace)
                await store.close()
            }
            closing = task
            return task
        }
        await task.value
    }

    /// What the store is doing now (its connections and queues), for a
    /// shutdown that is slow; nil when it has nothing to say.
    public var storeActivity: String? { store.activity }

    // MARK: Providers and operations

    /// Every provider this host holds now, with its circuit and health, and
    /// the manifests digest: what `GET /v1/providers`, `/metrics` and
    /// `/readyz` show.
    public func providerReport() -> ProviderReport {
        ProviderReport(providers.records, circuits: checkout.circuitStates())
    }

    /// The providers of a manifests folder, loaded as a host would load them
    /// (libraries copied under `data/plugins`) and shut down again, without a
    /// store or an engine: what `gateway providers` lists. No circuit.
    public static func inspectProviders(manifests: URL, data: URL, logger: Logger = Logger(label: "gateway")) async throws -> ProviderReport {
        let loader = AdapterLoader(store: LibraryStore(directory: data.appendingPathComponent("plugins")), logger: logger)
        let records = try await OffThePool.run("providers-load") { try ProviderRegistry.load(directory: manifests, loader: loader) }
        let report = ProviderReport(records, circuits: nil)
        for record in records { await record.adapter?.shutdown(grace: .seconds(1)) }
        return report
    }

    /// Whether a provider's notifications have an adapter here to verify
    /// them: one loaded at the start or since (a provider disabled while
    /// running keeps its adapter for the payments it has).
    public func acceptsWebhooks(from provider: String) -> Bool {
        providers.provider(provider) != nil
    }

    /// Whether this host can take payments now.
    public enum Readiness: Sendable {
        /// The store answers, and this many enabled providers are loaded.
        case ready(providers: Int)
        /// The store does not answer (why, for the logs only).
        case storeUnavailable(any Error)
        case noProviderLoaded
    }

    /// Reads from the store, and counts the enabled providers loaded.
    public func readiness() async -> Readiness {
        do {
            _ = try await store.sessionVersion("readiness-probe")
        } catch {
            return .storeUnavailable(error)
        }
        let loaded = providers.records.filter { $0.state == .loaded }.count
        return loaded == 0 ? .noProviderLoaded : .ready(providers: loaded)
    }

    /// Sets `"enabled"` in provider `id`'s manifest (atomically, preserving
    /// the file's bytes elsewhere), then applies the folder. A problem when
    /// no valid manifest has that id (`not_found`) or the edit would make it
    /// invalid (`invalid_request`); nothing is written then.
    public func setEnabled(_ enabled: Bool, provider id: String) async throws -> ManifestReloader.Report {
        let directory = configuration.manifests
        do {
            _ = try ManifestCatalogue.setMember("enabled", to: enabled ? "true" : "false", ofProvider: id, in: directory)
        } catch {
            switch error {
            case .unreadableFolder, .noSuchProvider:
                throw ProblemCatalog.problem(code: .notFound, detail: "no valid manifest with id \"\(id)\" in \(directory.path)")
            case .cannotEdit(let url, let detail):
                throw ProblemCatalog.problem(code: .invalidRequest, detail: "\(url.lastPathComponent): \(detail)")
            case .wouldBeInvalid(let url):
                throw ProblemCatalog.problem(code: .invalidRequest, detail: "\(url.lastPathComponent): the edited manifest would not be valid; nothing was written")
            case .writeFailed:
                throw error  // the host's own failure, not the caller's
            }
        }
        return try await manifests.reload()
    }

    /// Applies the manifests folder as it now is (off the concurrency pool).
    public func reload() async throws -> ManifestReloader.Report {
        try await manifests.reload()
    }

    /// ``reload()`` on the calling thread: for a signal handler's queue.
    @available(*, noasync, message: "loads adapters on the calling thread; use reload()")
    public func reloadNow() throws -> ManifestReloader.Report {
        try manifests.reloadNow()
    }

    /// Polls the manifests folder every `interval` and applies what changed,
    /// until the task is cancelled.
    public func watchManifests(every interval: Duration) async {
        await ManifestWatcher(reloader: manifests, interval: interval, logger: logger).run()
    }

    /// One reconciliation pass now (what `run()` does every interval).
    @discardableResult
    public func reconcile() async -> Reconciler.Pass {
        await Reconciler(checkout: checkout).runPass()
    }

    // MARK: The checkout API (see ``Checkout`` for the rules)

    /// Opens a session in `mode` (test unless said otherwise: only
    /// providers of that mode serve it). Every other operation takes the
    /// caller's mode too; a session of the other mode is `not_found` (nil:
    /// every mode, for a trusted caller such as the CLI).
    public func createSession(_ request: NewSession, idempotencyKey: String? = nil, mode: PaymentMode = .test) async throws(Problem) -> SessionSnapshot {
        try await checkout.createSession(request, idempotencyKey: idempotencyKey, mode: mode)
    }

    public func session(_ id: String, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await checkout.session(id, mode: mode)
    }

    public func session(ofPayment id: String, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await checkout.session(ofPayment: id, mode: mode)
    }

    public func attempt(session id: String, _ request: NewAttempt, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await checkout.attempt(session: id, request, idempotencyKey: idempotencyKey, mode: mode)
    }

    public func proceed(session id: String, attempt attemptID: String, _ input: PayerInput, idempotencyKey: String? = nil,
                        mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await checkout.proceed(session: id, attempt: attemptID, input, idempotencyKey: idempotencyKey, mode: mode)
    }

    /// Checks what a payer typed against `method`'s form (docs/fields.md):
    /// nothing is stored and no provider is called.
    public func validate(session id: String, method: String, values: [String: String], mode: PaymentMode? = nil) async throws(Problem) {
        try await checkout.validate(session: id, method: method, values: values, mode: mode)
    }

    /// What a card's first digits tell the session's checkout: brand,
    /// co-brands, and whether each may pay here. Reads six digits at most;
    /// nothing is stored and no provider is called.
    public func iin(session id: String, prefix: String, mode: PaymentMode? = nil) async throws(Problem) -> IINDetails {
        try await checkout.iin(session: id, prefix: prefix, mode: mode)
    }

    public func abort(session id: String, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> SessionSnapshot {
        try await checkout.abort(session: id, idempotencyKey: idempotencyKey, mode: mode)
    }

    public func capture(payment id: String, amount: Int64? = nil, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await checkout.capture(payment: id, amount: amount, idempotencyKey: idempotencyKey, mode: mode)
    }

    public func refund(payment id: String, amount: Int64? = nil, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await checkout.refund(payment: id, amount: amount, idempotencyKey: idempotencyKey, mode: mode)
    }

    public func void(payment id: String, idempotencyKey: String? = nil, mode: PaymentMode? = nil) async throws(Problem) -> PaymentChange {
        try await checkout.void(payment: id, idempotencyKey: idempotencyKey, mode: mode)
    }

    /// A payment as recorded (no provider call), with what it holds and why.
    public func payment(_ id: String, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await checkout.payment(id, mode: mode)
    }

    public func verify(attempt id: String, mode: PaymentMode? = nil) async throws(Problem) -> Attempt {
        try await checkout.verify(attempt: id, mode: mode)
    }

    /// Captures, refunds and voids sent and not settled yet, and why.
    public func heldOperations(limit: Int = 500) async throws(Problem) -> [HeldOperation] {
        try await checkout.heldOperations(limit: limit)
    }

    public func webhook(provider id: String, headers: [String: String], body: Data) async throws(Problem) -> WebhookOutcome {
        try await checkout.webhook(provider: id, headers: headers, body: body)
    }

    public func events(ofSession id: String, after: Int64 = 0, mode: PaymentMode? = nil) async throws(Problem) -> SessionEvents {
        try await checkout.events(ofSession: id, after: after, mode: mode)
    }

    /// A session's events as recorded now, numbered after `after`, oldest first (no live ones).
    public func recordedEvents(ofSession id: String, after: Int64 = 0, mode: PaymentMode? = nil) async throws(Problem) -> [SessionEvent] {
        try await checkout.recordedEvents(ofSession: id, after: after, mode: mode)
    }
}
