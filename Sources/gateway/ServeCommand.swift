import ArgumentParser
import MerchantWebhooks
import CheckoutHTTP
import Foundation
import WalletTokens
import Logging
import PaymentGateway
import PluginHost
import CheckoutEngine

/// `gateway serve`: the checkout API over HTTP on the embedded default.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the checkout API (HTTP): SQLite under --data by default, or PostgreSQL shared by several hosts with --database; the manifests folder watched live.",
        discussion: """
            Admin routes (/admin) exist only when a token is configured: GATEWAY_ADMIN_TOKEN, or a file named by \
            --admin-token-file or GATEWAY_ADMIN_TOKEN_FILE (16 characters at least). SIGHUP reloads the manifests; \
            SIGTERM and SIGINT shut down gracefully.

            Every /v1 route but /v1/webhooks needs an API key (Authorization: Bearer gk_test_… or gk_live_…; \
            see gateway keys). On the first start with no key at all, a test key is made and written to \
            <data>/test-api-key (mode 0600). --webhook-port serves the providers' webhooks, and nothing else, \
            on a second listener (the main one then serves no webhooks), so the payment API can stay private.
            """)

    @OptionGroup var host: HostOptions

    @Option(name: .customLong("host"), help: "The address to listen on (loopback by default).")
    var address: String = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, printed at start).")
    var port: Int = 8080

    @Option(help: "Serve the providers' webhooks (/v1/webhooks/…), and only them, on this port instead (0: any free port, printed at start).")
    var webhookPort: Int?

    @Option(help: "With --webhook-port: the address the webhook listener listens on (--host by default).")
    var webhookHost: String?

    @Flag(help: "Sandbox mode: the provider simulators run in-process, every manifest with a sandbox block is enabled against them with sandbox credentials (the files are not changed), and the mock keeps its books under --data.")
    var sandbox = false

    @Option(help: "With --sandbox: delay every simulator answer by this many milliseconds (a slow provider).")
    var sandboxLatencyMs: Int = 0

    @Option(help: "A file holding the admin bearer token.")
    var adminTokenFile: String?

    @Option(help: "The log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "info"

    @Option(name: .customLong("googlepay-root-keys"),
            help: "Google's root signing keys (keys.json) for adapters' Google Pay tokens; without it no Google Pay token is opened.")
    var googlePayRootKeys: String?

    @Option(name: .customLong("applepay-signing-window"),
            help: "Seconds an Apple Pay token's signing time may lie from now, either way, when adapters open tokens (default 300).")
    var applePaySigningWindow: Int = 300

    @Option(name: .customLong("shutdown-timeout"),
            help: "Seconds graceful shutdown (SIGTERM, SIGINT) may take before what is left is cancelled (default 60).")
    var shutdownTimeout: Int = 60

    @OptionGroup var merchantWebhooks: MerchantWebhookOptions

    func run() async throws {
        guard (1...3600).contains(shutdownTimeout) else { throw ValidationError("--shutdown-timeout must be 1 to 3600 seconds (got \(shutdownTimeout))") }
        guard sandboxLatencyMs >= 0 else { throw ValidationError("--sandbox-latency-ms must be 0 or more (got \(sandboxLatencyMs))") }
        guard (0...7 * 86_400).contains(applePaySigningWindow) else {
            throw ValidationError("--applepay-signing-window must be 0 to 604800 seconds (got \(applePaySigningWindow))")
        }
        if webhookHost != nil, webhookPort == nil { throw ValidationError("--webhook-host needs --webhook-port") }
        if sandbox { HostSetup.keepSandboxBooks(in: host.data) }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical (got \(logLevel))")
        }
        LoggingSystem.bootstrap { label in GatewayLogHandler(label: label, level: level) }
        let logger = Logger(label: "gateway")
        // No core dump, and no same-user process reads this one's memory
        // through /proc or ptrace (the keys, the secrets, the payers' data).
        if let why = HostHardening.makeNonDumpable() { logger.warning("cannot make the host non-dumpable: \(why)") }
        let admin: AdminAccess?
        do { admin = try AdminAccess.configured(file: adminTokenFile) }
        catch { throw ValidationError("\(error)") }
        let metrics = GatewayMetrics()
        var configuration = PaymentGateway.Configuration(manifests: host.manifests, data: host.data)
        configuration.webhooks = try merchantWebhooks.configuration()
        configuration.wallets.appleSigningTimeWindow = TimeInterval(applePaySigningWindow)
        if let googlePayRootKeys {
            guard let bytes = FileManager.default.contents(atPath: googlePayRootKeys) else {
                throw ValidationError("--googlepay-root-keys \(googlePayRootKeys) cannot be read")
            }
            do throws(WalletTokenError) { configuration.wallets.googleRootKeys = try GooglePaySigningKey.keys(fromJSON: bytes) } catch {
                throw ValidationError("--googlepay-root-keys \(googlePayRootKeys): \(error)")
            }
        }
        // One store for the engine and the API keys. PostgreSQL is not
        // waited for: the server starts, answers 503 (and /readyz fails)
        // until the database answers, and makes the first test key then.
        let store = try await HostSetup.store(host, logger: logger, wait: nil)
        configuration.store = store
        // The gateway's own keys (the same store) check requests once it is open.
        let keys = APIKeys(store: store)
        let firstKey = Task { [data = configuration.data] in
            while !Task.isCancelled {
                do {
                    FileHandle.standardOutput.write(Data(Self.firstKeyLine(try await FirstTestKey.ensure(keys: keys, data: data), logger: logger).utf8))
                    return
                } catch let unavailable as StoreUnavailable {
                    logger.warning("the first API key waits for the store: \(unavailable)")
                    try? await Task.sleep(for: .seconds(1))
                } catch {
                    logger.error("the first API key could not be made: \(error)")
                    return
                }
            }
        }
        if host.database == nil { await firstKey.value }
        let simulators = sandbox ? try await InProcessSandbox.start(data: configuration.data, latencyMilliseconds: sandboxLatencyMs, logger: logger) : nil
        configuration.sandbox = simulators?.overlay
        configuration.callObserver = { metrics.adapterCall($0) }
        configuration.webhooks.observer = WebhookObserver(tried: { metrics.webhookTried(endpoint: $0, delivered: $1) },
                                                          queued: { metrics.webhookQueued(endpoint: $0, counts: $1, now: $2) })
        let gateway = try await PaymentGateway.open(configuration: configuration, logger: logger)
        var server = CheckoutServer.Configuration()
        server.host = address
        server.port = port
        server.webhookPort = webhookPort
        server.webhookHost = webhookHost
        server.shutdownTimeout = .seconds(shutdownTimeout)
        let checkoutServer = CheckoutServer(gateway: gateway, metrics: metrics, admin: admin, configuration: server, logger: logger)
        let address = self.address
        let webhookAddress = webhookHost ?? address
        let webhooksLine = webhookPort == nil ? "" : "; webhooks only on the webhook listener"
        let simulatorsLine = simulators.map { "; provider simulators on \($0.overlay.baseURL)" } ?? ""
        defer { firstKey.cancel() }
        do {
            try await checkoutServer.run { port in
                let line = "gateway serving the checkout API on http://\(address):\(port) (admin API \(admin == nil ? "off: no token configured" : "on"))\(webhooksLine)\(simulatorsLine)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            } onWebhooksRunning: { port in
                FileHandle.standardOutput.write(Data("gateway serving the providers' webhooks (only) on http://\(webhookAddress):\(port)/v1/webhooks/\n".utf8))
            }
        } catch {
            await simulators?.stop()
            throw error
        }
        await simulators?.stop()
    }

    static func firstKeyLine(_ outcome: FirstTestKey.Outcome, logger: Logger) -> String {
        switch outcome {
        case .created(let file, let record):
            logger.notice("no API key yet: made test key \(record.id) (\(record.prefix)), its secret written to \(file.path)")
            return "made a test API key: it is in \(file.path) (send it as Authorization: Bearer $(cat \(file.path)))\n"
        case .existing(let file?):
            return "the test API key of the first start is in \(file.path) (gateway keys manages keys)\n"
        case .existing(nil):
            return ""
        }
    }
}
