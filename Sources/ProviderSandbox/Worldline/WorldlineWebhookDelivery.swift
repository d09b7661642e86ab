import AsyncHTTPClient
import Foundation
import NIOCore

/// One webhook the Worldline simulator posted (or could not).
public struct WorldlineDelivery: Sendable, Equatable {
    public var paymentID: String
    public var url: String
    /// `payment.<status>`, as the body's `type` says.
    public var type: String
    /// The answer's HTTP status, or nil when none came (or the URL is not on loopback).
    public var status: Int?
    /// How many times it was posted.
    public var tries: Int
}

/// Webhooks delivered as Worldline delivers them: on each status change of a
/// payment, a POST of the signed event (``WorldlineSimulator/webhook(forPayment:keyID:secret:)``:
/// `X-GCS-Signature`, `X-GCS-KeyId`) to every URL its creation named in
/// `feedbacks.webhooksUrls`, tried again (up to three times, a moment
/// apart) until one answers 2xx. The sandbox listens and talks on loopback
/// only: a URL on another host is recorded as undelivered, never called.
extension WorldlineSimulator {
    static let deliveryTries = 3
    static let maxDeliveries = 1_000

    /// The client deliveries go through: no redirect is followed (a loopback
    /// endpoint could otherwise send a signed webhook off the machine), no
    /// proxy. One for the process, as the simulators are.
    static let deliveryClient = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow, proxy: nil))

    /// Posts payment `id`'s current state to its webhook URLs, in the background.
    func deliverWebhooks(for id: String) {
        guard let payment = state.withLock({ $0.payments[id] }), !payment.webhookURLs.isEmpty,
              let webhook = webhook(forPayment: id) else { return }
        let type = "payment." + payment.status.lowercased()
        for url in payment.webhookURLs {
            guard Self.isLoopback(url) else {
                record(WorldlineDelivery(paymentID: id, url: url, type: type, status: nil, tries: 0))
                continue
            }
            Task { [self] in
                var delivery = WorldlineDelivery(paymentID: id, url: url, type: type, status: nil, tries: 0)
                while delivery.tries < Self.deliveryTries {
                    delivery.tries += 1
                    delivery.status = await Self.post(webhook, to: url)
                    if let status = delivery.status, (200..<300).contains(status) { break }
                    try? await Task.sleep(for: .milliseconds(200 * delivery.tries))
                }
                record(delivery)
            }
        }
    }

    /// The deliveries so far, oldest first (tests wait on them).
    public var deliveries: [WorldlineDelivery] { state.withLock { $0.deliveries } }

    private func record(_ delivery: WorldlineDelivery) {
        state.withLock { state in
            state.deliveries.append(delivery)
            if state.deliveries.count > Self.maxDeliveries { state.deliveries.removeFirst(state.deliveries.count - Self.maxDeliveries) }
        }
    }

    static func isLoopback(_ url: String) -> Bool {
        guard let host = URL(string: url)?.host?.lowercased() else { return false }
        return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }

    /// The answer's status, or nil when none came.
    private static func post(_ webhook: (body: String, headers: [String: String]), to url: String) async -> Int? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in webhook.headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: webhook.body))
        do {
            let response = try await deliveryClient.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return Int(response.status.code)
        } catch {
            return nil
        }
    }
}
