import Foundation
import GatewayAdapterSDK

/// Webhooks: `X-GCS-Signature` is base64(HMAC-SHA256(secret, raw body)),
/// under the secret whose id `X-GCS-KeyId` names (`webhook_key_id`, or
/// `webhook_key_id_previous` during a rotation). A webhook with an unknown
/// key id, a wrong signature, or either header twice is refused. A verified
/// one names the payment; the payment is read again (events arrive out of
/// order), and only that read decides.
extension WorldlineAdapter {
    func webhook(_ request: WebhookRequest) async throws -> WebhookResult {
        func refused(_ why: String) -> WebhookResult {
            WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: "Worldline webhook refused: \(why)", retryable: false))
        }
        guard let body = Data(base64Encoded: request.body) else { return refused("the body is not readable") }
        guard let keyID = request.headers["x-gcs-keyid"], let signature = request.headers["x-gcs-signature"] else {
            return refused("X-GCS-KeyId and X-GCS-Signature are required")
        }
        // The host joins a repeated header with a comma: one signature or key id has none.
        guard !keyID.contains(","), !signature.contains(",") else { return refused("X-GCS-KeyId or X-GCS-Signature was given more than once") }
        guard let key = webhookKeys.first(where: { $0.id == keyID }) else { return refused("X-GCS-KeyId names no configured webhook key") }
        guard var secret = host.secret(key.secret), !secret.isEmpty else {
            throw AdapterError.internal("the \(key.secret) secret is not configured, so Worldline webhooks cannot be verified")
        }
        defer { for i in secret.indices { secret[i] = 0 } }
        guard WorldlineSigner.verifies(body: body, signature: signature, secret: secret) else { return refused("the signature does not match the body") }
        guard let event = try? JSONDecoder().decode(WorldlineWire.Event.self, from: body), let eventID = event.id, !eventID.isEmpty else {
            return refused("the signed body is not a Worldline event")
        }
        guard let id = event.payment?.id, Self.isPaymentID(id) else {
            // Signed, but about something other than a payment (a refund's own event, a token): nothing to settle.
            return WebhookResult(verified: true, eventId: eventID)
        }
        let answer: WorldlineAnswer
        do { answer = try await client.get("/payments/\(id)/details") } catch let error as HTTPEgressError {
            throw AdapterError.internal("Worldline's payment \(id) could not be read for the webhook: \(error.message)")
        }
        guard answer.ok, let payment = answer.decode(WorldlineWire.Payment.self), payment.id == id else {
            throw AdapterError.internal("Worldline could not report payment \(id) for the webhook: \(answer.summary)")
        }
        guard let paymentId = payment.paymentOutput?.references?.merchantReference, !paymentId.isEmpty else {
            return WebhookResult(verified: true, eventId: eventID, providerReference: id, problem: AdapterProblem(
                code: .unknownPayment, message: "Worldline's payment \(id) carries no merchantReference: it was not made by this gateway", retryable: false))
        }
        let result = WorldlineStatus.result(payment)
        return WebhookResult(verified: true, eventId: eventID, paymentId: paymentId, providerReference: id,
                             status: result.status, amount: result.amount, problem: result.problem)
    }
}
