import Dispatch
import Foundation
import Hummingbird
import Logging
import PaymentGateway
import ServiceLifecycle
import UnixSignals

/// `gateway serve`: the checkout API, the gateway's reconciler and the
/// manifests watcher as one service group; with a webhook port, a second
/// listener that serves the providers' webhooks and nothing else (the main
/// one then serves no webhooks: providers reach the gateway on one port
/// only, and the payment API can listen where the internet cannot).
///
/// SIGTERM or SIGINT shuts it down gracefully, in reverse order of start: the
/// server stops accepting and finishes the requests in flight, the watcher
/// stops, then the gateway lets adapter calls finish (bounded by its grace)
/// and the store has committed everything it acknowledged. Each step is
/// logged as it starts and ends, and what it still waits for every five
/// seconds until it does (``ShutdownStep``); the whole is bounded by
/// ``Configuration/shutdownTimeout``. SIGHUP reloads the manifests at once.
public struct CheckoutServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        /// A second listener for the providers' webhooks only (nil: the main
        /// listener serves them, beside the API).
        public var webhookPort: Int?
        /// Where the webhook listener listens (the main `host` when nil).
        public var webhookHost: String?
        /// How often the manifests folder is looked at for changes.
        public var manifestPoll: Duration = .milliseconds(500)
        /// How long graceful shutdown may take before what is left of it is
        /// cancelled; ten seconds after that the process ends anyway
        /// (ServiceLifecycle's bound). Nothing it acknowledged is lost: a
        /// change is recorded before a provider is called, and an attempt
        /// cut short is reconciled.
        public var shutdownTimeout: Duration = .seconds(60)
        public init() {}
    }

    public let gateway: PaymentGateway
    public let api: CheckoutAPI
    let configuration: Configuration
    let logger: Logger

    public init(gateway: PaymentGateway, metrics: GatewayMetrics, admin: AdminAccess?, configuration: Configuration, logger: Logger) {
        self.gateway = gateway
        self.api = CheckoutAPI(gateway: gateway, metrics: metrics, admin: admin, logger: logger)
        self.configuration = configuration
        self.logger = logger
    }

    /// The Hummingbird application; `onRunning` gets the bound port (useful with port 0).
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        Application(
            router: api.router(webhooks: configuration.webhookPort == nil),
            server: .http1(configuration: .init(additionalChannelHandlers: [ParseErrorResponder()])),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "gateway"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// The webhook listener's application (nil without a webhook port).
    public func webhookApplication(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> (some ApplicationProtocol)? {
        configuration.webhookPort.map { port in
            Application(
                router: api.webhookRouter(),
                server: .http1(configuration: .init(additionalChannelHandlers: [ParseErrorResponder()])),
                configuration: .init(address: .hostname(configuration.webhookHost ?? configuration.host, port: port), serverName: "gateway"),
                onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                logger: logger)
        }
    }

    /// Runs until SIGTERM or SIGINT.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
                    onWebhooksRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let reload = reloadOnHangUp()
        defer { reload.cancel() }
        try await serviceGroup(signals: [.sigterm, .sigint], onRunning: onRunning, onWebhooksRunning: onWebhooksRunning).run()
    }

    /// The gateway, the manifests watcher and the server (and the webhook
    /// listener), started in that order and shut down gracefully in the
    /// reverse one. `onRunning` and `onWebhooksRunning` get each listener's port.
    public func serviceGroup(signals: [UnixSignal], onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
                             onWebhooksRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> ServiceGroup {
        let watcher = WatcherService(gateway: gateway, interval: configuration.manifestPoll)
        let inFlight = api.inFlight
        let serving = ShutdownStep("the checkout API", doing: "finishing the requests in flight", logger: logger) { inFlight.describe() }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: ShutdownStep("the gateway", doing: "the reconciler's pass, then the adapters' calls in flight, then the store", logger: logger) { [gateway] in
                gateway.storeActivity.map { "the store: \($0)" } ?? ""
            }.service(gateway)),
            .init(service: ShutdownStep("the manifests watcher", logger: logger).service(watcher)),
            .init(service: serving.service(application(onRunning: onRunning))),
        ]
        if let webhooks = webhookApplication(onRunning: onWebhooksRunning) {
            services.append(.init(service: ShutdownStep("the webhook listener", doing: "finishing the requests in flight", logger: logger) { inFlight.describe() }.service(webhooks)))
        }
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: signals, logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        group.maximumCancellationDuration = .seconds(10)
        return ServiceGroup(configuration: group)
    }

    private func reloadOnHangUp() -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP)
        let gateway = self.gateway
        let logger = self.logger
        source.setEventHandler {
            do {
                let report = try gateway.reloadNow()
                logger.info("SIGHUP: manifests reloaded (applied \(report.applied), removed \(report.removed), refused \(report.refused))")
            } catch {
                logger.error("SIGHUP: cannot read the manifests folder: \(error)")
            }
        }
        source.resume()
        return source
    }
}

/// The manifests watcher as a service: polls until graceful shutdown.
struct WatcherService: Service {
    let gateway: PaymentGateway
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await gateway.watchManifests(every: interval) }
    }
}
