import CheckoutEngine
import Foundation
import GatewayPayloads

/// What a merchant receives and lists: one event, with its id, type, mode,
/// session, number in the session and what it says; a delivery adds the
/// session as the commit that wrote the event left it (when this host made
/// that commit lately: ``CommittedStates``), else as it stood when the
/// event was queued, a moment later (docs/webhooks.md "A delivery").
///
/// ```json
/// {"id":"evt_ses_…_3","type":"attempt.succeeded","mode":"test","sessionId":"ses_…","sequence":3,
///  "at":"2026-11-29T05:10:00.123Z","attemptId":"att_…","status":"succeeded","providerId":"mock",
///  "amount":{"value":2500,"currency":"SAR"},"session":{"id":"ses_…","status":"completed",…,"version":3}}
/// ```
public enum WebhookBody {
    /// The delivery body of `event`, with `session` (nil when the session
    /// could not be read: the member is then absent).
    public static func delivery(_ event: FeedEvent, session: Session?) -> Data {
        var w = JSONWriter(capacity: 512 + 256 * (session?.attempts.count ?? 0))
        w.beginObject()
        writeMembers(event, to: &w)
        if let session {
            w.key("session")
            w.beginObject()
            session.writeMembers(to: &w, instruments: false)
            w.endObject()
        }
        w.endObject()
        return Data(w.bytes)
    }

    /// `event`'s members, inside an object the caller opened.
    public static func writeMembers(_ event: FeedEvent, to w: inout JSONWriter) {
        w.member("id", event.id)
        w.member("type", event.event.type.rawValue)
        w.member("mode", event.mode.rawValue)
        w.member("sessionId", event.event.sessionID)
        w.member("sequence", event.event.sequence)
        w.member("at", date: event.event.at)
        w.member("attemptId", event.event.attemptID)
        w.member("status", event.event.status)
        w.member("providerId", event.event.providerID)
        w.member("amount", event.event.amount)
        w.member("detail", event.event.detail)
    }
}
