import Crypto
import Foundation

/// A notification Tamara posts to the merchant's `merchant_url.notification`:
/// the JSON body, and the JWT (HS256, signed with the notification token)
/// both in `Authorization: Bearer` and as the `tamaraToken` query parameter.
///
/// The token's claims are `iat`, `exp`, `iss: "Tamara"` and the
/// notification's `order_id` and `event_type`. Tamara's documentation says
/// the token lets the merchant "ensure that the payload sent to your Webhook
/// URL endpoint is sent from Tamara without any modifications"; which claims
/// carry the payload is not published *(unofficial)*: public integrations
/// only show `iat` and `iss`. `signsContent: false` gives that bare shape.
public struct TamaraNotification: Sendable {
    public var url: String
    public var headers: [String: String]
    public var body: Data
    public var token: String
}

extension TamaraSimulator {
    /// The notification of `event` (`order_approved` unless told) for order
    /// `orderId`, signed now with `key` (the sandbox notification token unless
    /// told) and valid for `lifetime` seconds (negative: already expired).
    /// Nil when the order is unknown or that event has not happened to it.
    /// `signsContent`: whether the token carries `order_id` and `event_type`.
    ///
    /// The body is Tamara's current shape (`event_type`), with the legacy
    /// `order_status` member beside it.
    public func notification(forOrder orderId: String, event: String = "order_approved",
                             key: String = TamaraSimulator.notificationToken, lifetime: TimeInterval = 900,
                             signsContent: Bool = true) -> TamaraNotification? {
        guard let order = state.withLock({ $0.order(orderId) }), order.events.contains(event) else { return nil }
        let status = switch event {
        case "order_approved": "approved"
        case "order_declined": "declined"
        case "order_authorised": "authorised"
        case "order_canceled": "canceled"
        case "order_expired": "expired"
        default: order.status
        }
        let body = TamaraWire.json([
            "order_id": order.orderId, "order_reference_id": order.referenceId, "order_number": order.orderNumber,
            "event_type": event, "order_status": status, "data": [Any](),
        ])
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["iat": now, "exp": now + Int(lifetime), "iss": "Tamara"]
        if signsContent {
            claims["order_id"] = order.orderId
            claims["event_type"] = event
        }
        let token = Self.jwt(claims, key: key)
        let base = order.urls.notification ?? ""
        return TamaraNotification(
            url: base + (base.contains("?") ? "&" : "?") + "tamaraToken=" + token,
            headers: ["Content-Type": "application/json", "Authorization": "Bearer " + token],
            body: Data(body.utf8), token: token)
    }

    /// An HS256 JWT of `claims` signed with `key`.
    static func jwt(_ claims: [String: Any], key: String) -> String {
        let header = base64URL(Data(TamaraWire.json(["typ": "JWT", "alg": "HS256"]).utf8))
        let payload = base64URL(Data(TamaraWire.json(claims).utf8))
        let signingInput = header + "." + payload
        let signature = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return signingInput + "." + base64URL(Data(signature))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
