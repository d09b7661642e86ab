import CheckoutEngine
import Foundation
import GatewayPayloads

/// An endpoint as the API and `gateway webhooks --json` show it: its secret
/// only when just made or rotated (a `v1` one: ``WebhookEndpoints/shownSecret(_:)``),
/// its deliveries' counts when asked for one endpoint. Members with nothing
/// to say are left out.
public enum WebhookEndpointJSON {
    public static func bytes(_ endpoint: WebhookEndpointRecord, secret: WebhookSecret? = nil, counts: DeliveryCounts? = nil) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        write(endpoint, secret: secret, counts: counts, to: &w)
        return w.bytes
    }

    public static func write(_ endpoint: WebhookEndpointRecord, secret: WebhookSecret? = nil, counts: DeliveryCounts? = nil, to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", endpoint.id)
        w.member("url", endpoint.url)
        w.member("mode", endpoint.mode.rawValue)
        if let types = endpoint.types {
            w.key("types")
            w.beginArray()
            for type in types { w.string(type) }
            w.endArray()
        }
        w.member("description", endpoint.description)
        w.member("signing", endpoint.signing.rawValue)
        w.member("publicKey", endpoint.publicKey)
        w.member("secret", secret.flatMap(WebhookEndpoints.shownSecret))
        w.member("previousSecretUntil", date: endpoint.previousSecret == nil ? nil : endpoint.previousUntil)
        w.member("state", endpoint.state.rawValue)
        w.member("stateReason", endpoint.stateReason)
        w.member("createdAt", date: endpoint.createdAt)
        w.member("removedAt", date: endpoint.removedAt)
        if let counts {
            w.key("deliveries")
            w.beginObject()
            w.member("delivered", Int64(counts.delivered))
            w.member("pending", Int64(counts.pending))
            w.member("retrying", Int64(counts.retrying))
            w.member("abandoned", Int64(counts.abandoned))
            w.member("oldestUndeliveredAt", date: counts.oldestUndelivered)
            w.member("lastDeliveredAt", date: counts.lastDelivered)
            w.endObject()
        }
        w.endObject()
    }
}
