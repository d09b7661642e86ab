import Foundation
import GatewayAdapterSDK

/// Tamara's notifications. The JWT is read from `Authorization: Bearer` (the
/// host's webhook route passes headers and the raw body, not the query
/// string, so `?tamaraToken=` is not seen) and verified with the
/// `notification_token` secret (``TamaraJWT``). The JWT does not cover the
/// body, so the body is used only for its `order_id`: the order itself is
/// read from Tamara, and an `approved` one is settled as continue would
/// settle it (authorised, then captured for automatic capture). The capture
/// mode comes from the order's `additional_data.capture`, written by
/// authorize; an order without it is only authorised and reported with no
/// status, for verify (which knows the mode from the providerReference) to
/// finish. A lost order read throws, so the host refuses the notification and
/// Tamara sends it again; an order Tamara does not know (HTTP 404) is
/// acknowledged with `unknown_payment`.
extension TamaraAdapter {
    struct Notification: Decodable {
        var orderId: String?
        var eventType: String?
        var orderStatus: String?
    }

    func webhook(_ request: WebhookRequest) async throws -> WebhookResult {
        func refused(_ message: String) -> WebhookResult {
            WebhookResult(verified: false, problem: AdapterProblem(code: "webhook_unverified", message: message, retryable: false))
        }
        guard var key = host.secret("notification_token"), !key.isEmpty else {
            return refused("no notification_token secret is configured, so no notification can be verified")
        }
        defer { for i in key.indices { key[i] = 0 } }
        let authorization = request.headers["authorization"] ?? ""
        guard authorization.lowercased().hasPrefix("bearer "), case let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            return refused("missing Authorization: Bearer <tamaraToken> header")
        }
        do {
            try TamaraJWT.verify(token, key: key, now: host.now)
        } catch {
            return refused(error.reason)
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let body = Data(base64Encoded: request.body), let note = try? decoder.decode(Notification.self, from: body),
              let orderId = note.orderId, TamaraReference.isIdentifier(orderId) else {
            return WebhookResult(verified: true, problem: AdapterProblem(code: "unknown_payment", message: "the notification names no Tamara order_id", retryable: false))
        }
        let event = note.eventType ?? note.orderStatus.map { "order_" + $0 } ?? "order_event"
        let eventId = "\(orderId):\(event)"
        let answer = try await query(orderId)
        if answer.status == 404 {
            // Acknowledged, so Tamara does not send it again for ever.
            return WebhookResult(verified: true, eventId: eventId, problem: AdapterProblem(
                code: "unknown_payment", message: "Tamara has no order \(orderId.prefix(64)): \(answer.summary)", retryable: false))
        }
        let order = try Self.order(from: answer, orderId)
        guard let capture = order.additionalData?["capture"].flatMap(CaptureMode.init(rawValue:)) else {
            if order.status == "approved" {
                _ = try await post("/orders/\(TamaraClient.segment(orderId))/authorise", nil, what: "authorise")
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
