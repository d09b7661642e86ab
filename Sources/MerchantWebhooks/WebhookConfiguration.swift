import CheckoutEngine
import Foundation

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
    /// Events read per fan-out step.
    public var fanOutPage = 500
    /// Deliveries in flight at once, at most: per endpoint, those of the
    /// stretches of the feed sent at once (a try left in flight counts until
    /// it ends), and, apart, those the retry loop sends.
    public var sendBatch = 64
    /// How long a stretch of the feed sent at once waits for its tries
    /// before leaving those still in flight to the retry loop (and going on
    /// with the feed): one slow answer holds back other sessions' events no
    /// longer than this.
    public var linger: Duration = .milliseconds(500)
    /// How long an endpoint's name may take to resolve before a try fails
    /// (on resolver threads of the webhooks' own: ``WebhookResolver``).
    public var resolveTimeout: Duration = .seconds(5)
    /// Told of every try and, every ``reportInterval``, of each endpoint's queue (metrics).
    public var observer = WebhookObserver()
    public var reportInterval: Duration = .seconds(5)
    /// A claim lasts the resolve timeout, the timeout and this: a try still
    /// in flight is never claimed by another host, and one whose host died
    /// is claimed again this long after its timeout.
    public var leaseMargin: Duration = .seconds(5)

    public init() {}

    /// How long a claim lasts.
    var lease: Duration { resolveTimeout + timeout + leaseMargin }
    /// How long an endpoint's fan-out lease lasts: a stretch's reads, its
    /// name resolved, its linger and its writes (a stopping host hands it back).
    var fanOutLease: Duration { lease + linger }
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
