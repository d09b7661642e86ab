import CheckoutEngine
import Foundation
import GatewayPayloads
import MerchantWebhooks

extension PaymentGateway {
    /// Every event of `mode` after `cursor`, in the order they were committed
    /// (`GET /v1/events`): at most `limit` scanned; page on from ``FeedPage/next``.
    public func eventFeed(after cursor: EventCursor, mode: PaymentMode, types: Set<String>?, limit: Int) async throws -> FeedPage {
        guard let feed = store as? any WebhookStore else { return FeedPage(events: [], next: cursor, more: false) }
        return try await feed.feed(after: cursor, mode: mode, types: types, limit: limit)
    }
}
