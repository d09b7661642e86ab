import CheckoutEngine
import CoreMetrics
import Foundation
import GatewayPayloads
import Hummingbird
import Metrics
import PaymentGateway
import Prometheus
import Synchronization

/// The server's metrics, in the Prometheus text format at `GET /metrics`.
///
/// Recorded through swift-metrics with a factory of its own (not the process's
/// global `MetricsSystem`), so that several servers in one process (tests)
/// each count their own.
public final class GatewayMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    /// Each route's, method's and status's counter and timer, made once (a
    /// lookup in the factory's registry for every request cost more than
    /// recording did).
    private let requestMetrics = Mutex<[RequestKey: (counter: CoreMetrics.Counter, timer: CoreMetrics.Timer)]>([:])

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    /// Each provider's attempt counter per outcome, made once.
    private let attemptCounters = Mutex<[AttemptKey: CoreMetrics.Counter]>([:])

    private struct AttemptKey: Hashable {
        var provider: String
        var outcome: String
    }

    /// Each adapter call's timer (by provider and operation) and counter (by
    /// provider, version, operation and outcome), made once.
    private let callMetrics = Mutex<[CallKey: (timer: CoreMetrics.Timer, counter: CoreMetrics.Counter)]>([:])

    private struct CallKey: Hashable {
        var provider: String
        var version: String
        var operation: String
        var outcome: String
    }

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
            .seconds(5), .seconds(10), .seconds(30),
        ]
        self.factory = factory
    }

    /// Requests by route (the route's pattern, not the raw path), method and status.
    func request(route: String, method: String, status: Int, duration: Duration) {
        let key = RequestKey(route: route, method: method, status: status)
        let metrics = requestMetrics.withLock { made in
            if let known = made[key] { return known }
            let dimensions = [("route", route), ("method", method), ("status", String(status))]
            let new = (counter: CoreMetrics.Counter(label: "http_requests_total", dimensions: dimensions, factory: factory),
                       timer: CoreMetrics.Timer(label: "http_request_duration_seconds", dimensions: [("route", route), ("method", method)], factory: factory))
            made[key] = new
            return new
        }
        metrics.counter.increment()
        metrics.timer.recordNanoseconds(duration.nanoseconds)
    }

    /// Attempts by provider and the status they ended the request in.
    func attempt(_ attempt: Attempt) {
        let key = AttemptKey(provider: attempt.providerID, outcome: attempt.status.rawValue)
        let counter = attemptCounters.withLock { made in
            if let known = made[key] { return known }
            let new = CoreMetrics.Counter(label: "checkout_attempts_total", dimensions: [("provider", key.provider), ("outcome", key.outcome)],
                                          factory: factory)
            made[key] = new
            return new
        }
        counter.increment()
    }

    /// Adapter calls: latency by provider and operation, and outcomes by
    /// provider, the version that answered (both show during an upgrade) and operation.
    public func adapterCall(_ call: AdapterCall) {
        let key = CallKey(provider: call.provider, version: call.version, operation: call.operation, outcome: call.outcome)
        let metrics = callMetrics.withLock { made in
            if let known = made[key] { return known }
            let new = (timer: CoreMetrics.Timer(label: "adapter_call_duration_seconds", dimensions: [("provider", key.provider), ("operation", key.operation)],
                                                factory: factory),
                       counter: CoreMetrics.Counter(label: "adapter_calls_total",
                                                    dimensions: [("provider", key.provider), ("version", key.version), ("operation", key.operation), ("outcome", key.outcome)],
                                                    factory: factory))
            made[key] = new
            return new
        }
        metrics.timer.recordNanoseconds(call.duration.nanoseconds)
        metrics.counter.increment()
    }

    /// A try of a merchant webhook delivery, by endpoint and how it ended.
    public func webhookTried(endpoint: String, delivered: Bool) {
        CoreMetrics.Counter(label: "webhook_deliveries_total", dimensions: [("endpoint", endpoint), ("outcome", delivered ? "delivered" : "failed")],
                            factory: factory).increment()
    }

    /// An endpoint's queue: deliveries waiting (never failed), retrying, and
    /// how old the oldest undelivered one is (0 when none waits).
    public func webhookQueued(endpoint: String, counts: DeliveryCounts, now: Date) {
        Gauge(label: "webhook_deliveries_pending", dimensions: [("endpoint", endpoint)], factory: factory).record(Double(counts.pending))
        Gauge(label: "webhook_deliveries_retrying", dimensions: [("endpoint", endpoint)], factory: factory).record(Double(counts.retrying))
        Gauge(label: "webhook_oldest_undelivered_seconds", dimensions: [("endpoint", endpoint)], factory: factory)
            .record(counts.oldestUndelivered.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }

    /// The exposition, with each provider's circuit state as of now
    /// (0 closed, 1 half-open, 2 open), and for each loaded adapter the host's
    /// calls into it (cancels) that ran past the documented bound since it
    /// was loaded (an in-process adapter that blocks: see AdapterCallQueue).
    /// Each loaded adapter's health too (0 ready, 1 restarting, 2 quarantined,
    /// 3 closed) and, for an isolated one, its runner's ends and restarts.
    func exposition(_ report: ProviderReport) -> [UInt8] {
        var blocked: [String: Int] = [:]
        for provider in report.providers {
            guard let id = provider.id else { continue }
            if provider.health != nil { blocked[id, default: 0] += provider.blockedCalls }
        }
        for (provider, count) in blocked {
            Gauge(label: "adapter_blocked_calls", dimensions: [("provider", provider)], factory: factory).record(Double(count))
        }
        for provider in report.providers {
            guard let id = provider.id else { continue }
            if let health = provider.health {
                let state: Double = switch health {
                case .ready: 0
                case .restarting: 1
                case .quarantined: 2
                case .closed: 3
                }
                Gauge(label: "adapter_health", dimensions: [("provider", id)], factory: factory).record(state)
            }
            if let crashes = provider.runnerCrashes, let restarts = provider.runnerRestarts {
                Gauge(label: "adapter_runner_crashes", dimensions: [("provider", id)], factory: factory).record(Double(crashes))
                Gauge(label: "adapter_runner_restarts", dimensions: [("provider", id)], factory: factory).record(Double(restarts))
            }
            let circuit: Double = switch provider.circuit ?? .closed {
            case .closed: 0
            case .halfOpen: 1
            case .open: 2
            }
            Gauge(label: "provider_circuit_state", dimensions: [("provider", id)], factory: factory).record(circuit)
        }
        return registry.emitToBuffer()
    }
}
