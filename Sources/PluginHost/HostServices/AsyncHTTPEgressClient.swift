import AsyncHTTPClient
import Foundation
import GatewayPayloads
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// The host's egress client, on AsyncHTTPClient: no thread ever waits on the
/// network, so thousands of adapter calls can be in flight at once.
///
/// It keeps one `HTTPClient` (one connection pool) per distinct ``EgressTLS``,
/// all on one event loop group (NIO's singleton by default), each created when the first
/// adapter instance with those settings is created and shut down when the last
/// one is destroyed (or by ``shutdown()`` when the host stops). Redirects are
/// never followed, HTTP/1.1 only (so pinning sees every connection), and the
/// per-host connection limit is high enough for thousands of slow calls.
public final class AsyncHTTPEgressClient: HTTPEgressClient {
    /// The process's shared instance: the default of ``AdapterLoader``.
    public static let shared = AsyncHTTPEgressClient()

    private struct Pool {
        var client: HTTPClient
        var users: Int
    }

    private let pools = Mutex<[EgressTLS: Pool]>([:])
    /// HTTP/1 connections per host before requests queue for one.
    public let connectionsPerHost: Int
    /// The largest response body accepted.
    public let maximumResponseBytes: Int

    /// The event loops the pools run on.
    private let eventLoopGroup: any EventLoopGroup
    /// Resolves a name to its addresses, for the check before connecting
    /// (``EgressAddress``); the connection itself resolves through the system.
    private let resolve: @Sendable (String) async throws -> [String]
    /// Names found public (or named) lately, by host, port and named set,
    /// until when: a request reusing a pooled connection needs no lookup of
    /// its own (every new connection's peer is checked anyway).
    private let checkedNames = Mutex<[String: ContinuousClock.Instant]>([:])
    /// How long a name's check stands.
    static let nameCheckLifetime: Duration = .seconds(30)

    /// - Parameter eventLoopGroup: NIO's singleton group unless given (a test
    ///   that opens thousands of connections keeps them off the shared loops).
    /// - Parameter resolve: the system's resolver unless given (a test
    ///   that plays a name answering one thing, then another).
    public init(connectionsPerHost: Int = 4_096, maximumResponseBytes: Int = 16 << 20,
                eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
                resolve: (@Sendable (String) async throws -> [String])? = nil) {
        self.connectionsPerHost = connectionsPerHost
        self.maximumResponseBytes = maximumResponseBytes
        self.eventLoopGroup = eventLoopGroup
        self.resolve = resolve ?? { try await EgressAddress.systemResolve($0) }
    }

    deinit {
        // An HTTPClient must be shut down before it goes away; nobody waits here.
        for pool in pools.withLock({ $0.values }) { pool.client.shutdown { _ in } }
    }

    /// How many connection pools are open (one per distinct TLS settings in use).
    public var openPools: Int { pools.withLock { $0.count } }

    public func retain(_ tls: EgressTLS) {
        pools.withLock { pools in
            if pools[tls] != nil {
                pools[tls]!.users += 1
            } else if let client = try? makeClient(tls) {
                pools[tls] = Pool(client: client, users: 1)
            }
        }
    }

    public func release(_ tls: EgressTLS) async {
        let closing: HTTPClient? = pools.withLock { pools in
            guard var pool = pools[tls] else { return nil }
            pool.users -= 1
            if pool.users > 0 {
                pools[tls] = pool
                return nil
            }
            pools[tls] = nil
            return pool.client
        }
        try? await closing?.shutdown()
    }

    /// Shuts every pool down (the host is stopping); later sends fail as unreachable.
    public func shutdown() async {
        let clients = pools.withLock { pools in
            defer { pools.removeAll() }
            return pools.values.map(\.client)
        }
        for client in clients { try? await client.shutdown() }
    }

    public func send(_ request: EgressHTTPRequest, tls: EgressTLS) async throws(EgressFailure) -> EgressHTTPResponse {
        guard let client = pools.withLock({ $0[tls]?.client }) else {
            throw EgressFailure(.unreachable, "egress is closed for this adapter instance (it was destroyed, or the host is stopping)")
        }
        let outgoing: HTTPClient.Request
        do {
            var headers = HTTPHeaders()
            for (name, value) in request.headers where !Self.hostManaged.contains(name.lowercased()) {
                headers.add(name: name, value: value)
            }
            outgoing = try HTTPClient.Request(url: request.url, method: HTTPMethod(rawValue: request.method.uppercased()),
                                              headers: headers, body: request.body.isEmpty ? nil : .bytes(request.body))
        } catch {
            throw EgressFailure(.denied, "the request cannot be built: \(error)")
        }
        // Egress by address: a name must lead only where the allowlist says
        // (EgressAddress); each connection's peer is checked again.
        if let host = request.url.host, !EgressAddress.isAddress(host) {
            let name = "\(host.lowercased()):\(request.endpoint.port) \(tls.namedAddresses.sorted())"
            let now = ContinuousClock.now
            if checkedNames.withLock({ ($0[name] ?? now) <= now }) {
                do {
                    let addresses = try await resolve(host.lowercased())
                    try EgressAddress.check(host, port: request.endpoint.port, addresses: addresses, named: tls.namedAddresses)
                } catch {
                    throw Self.failure(for: error, sent: false, timeout: request.timeout)
                }
                checkedNames.withLock { names in
                    if names.count >= 1024 { names.removeAll() }
                    names[name] = now + Self.nameCheckLifetime
                }
            }
        }
        let collector = EgressResponseCollector(limit: maximumResponseBytes)
        let nanoseconds = request.timeout.nanoseconds
        let task = client.execute(request: outgoing, delegate: collector, deadline: .now() + .nanoseconds(nanoseconds))
        do {
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw Self.failure(for: error, sent: collector.requestSent, timeout: request.timeout)
        }
    }

    /// Headers the client sets itself from the URL and body.
    static let hostManaged: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    /// Maps what went wrong to the status the ABI documents for it.
    static func failure(for error: any Error, sent: Bool, timeout: Duration) -> EgressFailure {
        if let mismatch = error as? EgressPinning.Mismatch {
            return EgressFailure(.denied, "\(mismatch); nothing was sent")
        }
        if let refused = error as? EgressAddress.Refused {
            return EgressFailure(.denied, "\(refused); nothing was sent")
        }
        if let unresolvable = error as? EgressAddress.Unresolvable {
            return EgressFailure(.unreachable, "\(unresolvable); nothing was sent")
        }
        if rejectsClientCertificate(error) {
            return EgressFailure(.unreachable, "the server refused this adapter's client certificate during the TLS handshake (\(error)); it processed nothing")
        }
        let timedOut = (error as? HTTPClientError).map { [.deadlineExceeded, .readTimeout, .connectTimeout].contains($0) } ?? false
        if !sent {
            if timedOut { return EgressFailure(.unreachable, "could not connect within \(timeout); nothing was sent") }
            return EgressFailure(.unreachable, "could not connect: \(error); nothing was sent")
        }
        if timedOut { return EgressFailure(.timeout, "no full answer within \(timeout) after the request was sent") }
        return EgressFailure(.outcomeUnknown, "the exchange failed after the request was sent (\(error)); the provider may have acted on it")
    }

    /// TLS alerts a server sends when it rejects the client certificate. In TLS 1.3
    /// they can arrive after the client wrote its request, but the server ends
    /// the handshake with them, so no request was ever processed.
    static let clientCertificateAlerts = [
        "ALERT_CERTIFICATE_REQUIRED", "ALERT_BAD_CERTIFICATE", "ALERT_UNKNOWN_CA", "ALERT_CERTIFICATE_EXPIRED",
        "ALERT_CERTIFICATE_REVOKED", "ALERT_CERTIFICATE_UNKNOWN", "ALERT_UNSUPPORTED_CERTIFICATE", "ALERT_ACCESS_DENIED",
    ]

    static func rejectsClientCertificate(_ error: any Error) -> Bool {
        guard error is NIOSSLError || error is BoringSSLError else { return false }
        let text = "\(error)"
        return clientCertificateAlerts.contains { text.contains($0) }
    }

    private func makeClient(_ tls: EgressTLS) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = try tls.makeConfiguration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(10))
        configuration.decompression = .disabled
        configuration.httpVersion = .http1Only
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost)
        // Fail at once with the real reason (a pin mismatch, a refused
        // connection) instead of retrying until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        // No span per request: the host bootstraps no tracer, and the no-op one's spans and
        // attributes were 1.4% of a webhook delivery run's CPU (BENCHMARKS.md, issue 37).
        configuration.tracing.tracer = nil
        // Every connection's peer address, then (with pins) its key, before any request is written.
        let address = EgressAddress.verifier(tls.namedAddresses)
        let pins = tls.pins.isEmpty ? nil : EgressPinning.verifier(tls.pins)
        configuration.http1_1ConnectionDebugInitializer = { channel in
            address(channel).flatMap { pins?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
        }
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }
}
