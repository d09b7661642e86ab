import Foundation
import GatewayAdapterSDK

/// Tamara's notifications. The JWT is read from `Authorization: Bearer` (the
/// host's webhook route passes headers and the raw body, not the query
/// string, so `?tamaraToken=` is not seen) and verified with the
/// `notification_token` secret (``TamaraJWT``).
///
/// **What the body may decide.** The body is not signed, so nothing a forged
/// or replayed body says may choose the notification's event id (the host
/// records it and drops any later notification with the same one: a forged
/// body choosing the id of a genuine notification still to come would
/// silence it). The event id is made of signed content only: the order
/// named in the token and the token's digest, so two deliveries of one signed
/// notification are one event whatever their bodies say.
/// - A token that names its order (`order_id`, and `event_type` when it
///   carries one) decides the order: a body naming another order, or another
///   event, is refused as forged.
/// - A token that names none (only `iat`, `exp`, `iss`: the shape public
///   integrations show) leaves the body's `order_id` to say which order to
///   read, and nothing more: the event id is that order as Tamara reports it,
///   its status there, and the token's digest. A replayed token with a body
///   naming another order can at most make the adapter read that order's
///   true state; it cannot take the id of that order's own notification,
///   which carries a token of its own.
///
/// The order itself is always read from Tamara, and an `approved` one is
/// settled as continue would settle it (authorised, then captured for
/// automatic capture). The capture mode comes from the order's
/// `additional_data.capture`, written by authorize; an order without it is
/// only authorised and reported with no status, for verify (which knows the
/// mode from the providerReference) to finish. A lost order read throws, so
/// the host refuses the notification and Tamara sends it again; an order
/// Tamara does not know (HTTP 404) is acknowledged with `unknown_payment`.
extension TamaraAdapter {
    /// What the body claims (unsigned).
    struct Notification: Decodable {
        var orderId: String?
        var eventType: String?
    }

    func webhook(_ request: WebhookRequest) async throws -> WebhookResult {
        func refused(_ message: String) -> WebhookResult {
            WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: message, retryable: false))
        }
        guard var key = host.secret("notification_token"), !key.isEmpty else {
            return refused("no notification_token secret is configured, so no notification can be verified")
        }
        defer { for i in key.indices { key[i] = 0 } }
        let authorization = request.headers["authorization"] ?? ""
        guard authorization.lowercased().hasPrefix("bearer "), case let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            return refused("missing Authorization: Bearer <tamaraToken> header")
        }
        let signed: TamaraJWT.Verified
        do {
            signed = try TamaraJWT.verify(token, key: key, now: host.now)
        } catch {
            return refused(error.reason)
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let note = Data(base64Encoded: request.body).flatMap { try? decoder.decode(Notification.self, from: $0) }
        let orderId: String
        if let signedOrder = signed.orderId {
            guard TamaraReference.isIdentifier(signedOrder) else { return refused("the token's order_id is not a Tamara order id") }
            if let claimed = note?.orderId, claimed != signedOrder {
                return refused("the body names order \(claimed.prefix(64)), the signed token order \(signedOrder.prefix(64)): the body was not sent by Tamara")
            }
            if let signedEvent = signed.eventType, let claimed = note?.eventType, claimed != signedEvent {
                return refused("the body names event \(claimed.prefix(40)), the signed token \(signedEvent.prefix(40)): the body was not sent by Tamara")
            }
            orderId = signedOrder
        } else {
            guard let named = note?.orderId, TamaraReference.isIdentifier(named) else {
                return WebhookResult(verified: true, problem: AdapterProblem(code: .unknownPayment, message: "the notification names no Tamara order_id", retryable: false))
            }
            orderId = named
        }
        // Signed content only (see above); an unsigned order id is joined by where Tamara says that order stands.
        func makeEventId(_ status: String) -> String {
            let signature = String(signed.digest.prefix(32))
            return signed.orderId != nil ? "\(orderId):\(signature)" : "\(orderId):\(status):\(signature)"
        }
        let answer = try await query(orderId)
        if answer.status == 404 {
            // Acknowledged, so Tamara does not send it again for ever.
            return WebhookResult(verified: true, eventId: makeEventId("unknown"), problem: AdapterProblem(
                code: .unknownPayment, message: "Tamara has no order \(orderId.prefix(64)): \(answer.summary)", retryable: false))
        }
        let order = try Self.order(from: answer, orderId)
        let eventId = makeEventId(order.status ?? "")
        guard let capture = order.additionalData?["capture"].flatMap(CaptureMode.init(rawValue:)) else {
            if order.status == "approved" {
                _ = try await post("/orders/\(ProviderHTTPClient.pathSegment(orderId))/authorise", nil, what: "authorise")
            }
            return WebhookResult(verified: true, eventId: eventId, paymentId: order.orderReferenceId)
        }
        // The checkout id is not needed past authorize; the engine keeps the reference it has.
        let reference = TamaraReference(capture: capture, orderId: orderId, checkoutId: "notification")
        let result = try await settle(order, reference)
        return WebhookResult(verified: true, eventId: eventId, paymentId: order.orderReferenceId,
                             status: result.status, amount: result.amount, problem: result.problem)
    }
}
