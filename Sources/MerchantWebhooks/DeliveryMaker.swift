import CheckoutEngine
import Foundation

/// Makes an endpoint's deliveries of a stretch of the feed, each with its
/// body: the event and its session right after it when this host committed
/// it lately (``CommittedStates``), else the session as it is now, read once
/// per session of the stretch. The one way both the fan-out and a replay
/// make them.
struct DeliveryMaker {
    var sessions: any CheckoutStore
    var states: CommittedStates?
    /// Told of a session that cannot be read (a newer host's document): its events go without it.
    var unreadable: (String, any Error) -> Void

    func deliveries(_ events: [FeedEvent], endpoint: String, at: Date) async throws -> [WebhookDelivery] {
        var read: [String: Session?] = [:]
        var deliveries: [WebhookDelivery] = []
        deliveries.reserveCapacity(events.count)
        for event in events {
            let sessionID = event.event.sessionID
            var session = states?.session(sessionID, after: event.event.sequence)
            if session == nil {
                if read[sessionID] == nil {
                    do {
                        read[sessionID] = .some(try await sessions.session(sessionID))
                    } catch let unavailable as StoreUnavailable {
                        throw unavailable
                    } catch {
                        unreadable(sessionID, error)
                        read[sessionID] = .some(nil)
                    }
                }
                session = read[sessionID] ?? nil
            }
            deliveries.append(WebhookDelivery(
                endpointID: endpoint, sessionID: sessionID, number: event.event.sequence, cursor: event.cursor,
                type: event.event.type.rawValue, body: WebhookBody.delivery(event, session: session),
                queuedAt: at, dueAt: at))
        }
        return deliveries
    }
}
