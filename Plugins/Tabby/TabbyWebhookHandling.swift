import Foundation
import GatewayAdapterSDK

/// webhook: Tabby signs nothing. It echoes the header the merchant
/// registered, which must carry the `webhook_header_value` secret (without
/// both configured, every notification is refused), and the payment the body
/// names is fetched from Tabby: what is reported is the fetched payment,
/// never the body. A payment Tabby does not know is not verified.
extension TabbyAdapter {
    func webhook(_ request: WebhookRequest) async throws -> WebhookResult {
        if let reason = headerRefusal(request.headers) { return Self.unverified(reason) }
        guard let data = Data(base64Encoded: request.body),
              let named = try? JSONDecoder().decode(Named.self, from: data),
              let id = named.id, TabbyReference.isIdentifier(id),
              let currency = named.currency, let region = TabbyRegion(currency: currency) else {
            return Self.unverified("the body is not a Tabby payment (it needs id and currency SAR, AED or KWD)")
        }
        guard client.regions[region] != nil else {
            return Self.unverified("the payment is in \(currency), whose Tabby host (base_url_\(region.rawValue)) is not configured")
        }
        let probe = TabbyReference(region: region, capture: .manual, paymentId: id)
        guard let payment = try await client.payment(probe) else {
            return Self.unverified("Tabby does not know payment \(id): the notification did not come from Tabby")
        }
        // The capture mode this adapter wrote into meta at checkout. Without
        // it the notification is acknowledged and nothing is acted on:
        // capturing money the merchant may have meant only to hold is not
        // ours to guess. The host's verify, whose reference carries the
        // mode, settles the payment.
        guard let capture = payment.meta?.capture.flatMap(CaptureMode.init(rawValue:)) else {
            host.log(.info, "Tabby payment \(id) carries no meta.capture; acknowledged without settling it (a verify will)")
            return WebhookResult(verified: true, paymentId: payment.order?.referenceId)
        }
        let reference = TabbyReference(region: region, capture: capture, paymentId: id)
        let hostPaymentId = payment.order?.referenceId
        let result: AdapterResult
        if let hostPaymentId, !hostPaymentId.isEmpty {
            do {
                result = try await settle(reference, hostPaymentId: hostPaymentId, payerCancelled: false)
            } catch AdapterError.outcomeUnknown(let why) {
                // Genuine, but the capture's answer was lost: report nothing; a verify settles it.
                host.log(.info, "Tabby webhook for payment \(id): \(why)")
                return WebhookResult(verified: true, paymentId: hostPaymentId, providerReference: reference.text)
            }
        } else {
            result = Self.classify(payment, reference, payerCancelled: false)
        }
        let event = [id, result.providerStatus ?? payment.status ?? "", result.status.rawValue].joined(separator: ":")
        return WebhookResult(verified: true, eventId: event, paymentId: hostPaymentId, providerReference: reference.text,
                             status: result.status, amount: result.amount, problem: result.problem)
    }

    /// The members of the body used to find the payment.
    private struct Named: Decodable {
        var id: String?
        var currency: String?
    }

    /// Why the registered header does not match, or nil when it does.
    private func headerRefusal(_ headers: [String: String]) -> String? {
        guard let name = webhookHeader else {
            return "config.webhook_header is not set (a sandbox setup), so no notification can be checked"
        }
        guard var expected = host.secret("webhook_header_value"), !expected.isEmpty else {
            return "config.webhook_header is set but the webhook_header_value secret is not, so no notification can be checked"
        }
        defer { for i in expected.indices { expected[i] = 0 } }
        guard let given = headers[name] ?? headers.first(where: { $0.key.lowercased() == name })?.value else {
            return "the registered header \(name) is missing"
        }
        let bytes = Array(given.utf8)
        var difference = UInt8(bytes.count == expected.count ? 0 : 1)
        for i in 0..<min(bytes.count, expected.count) { difference |= bytes[i] ^ expected[i] }
        return difference == 0 ? nil : "the registered header \(name) does not carry the registered value"
    }

    static func unverified(_ reason: String) -> WebhookResult {
        WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: reason, retryable: false))
    }
}
