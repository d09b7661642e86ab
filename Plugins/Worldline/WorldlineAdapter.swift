import Foundation
import GatewayAdapterSDK

/// Worldline Direct: cards from client-side encrypted input or stored
/// tokens, 3-D Secure by redirect, capture, cancel, refund, and webhooks.
///
/// - **Every request is signed** `GCS v1HMAC` (``WorldlineSigner``); POSTs
///   carry `X-GCS-Idempotence-Key`: the attempt's idempotency key on a
///   create, the operation's on a capture, cancel or refund, so a retry is
///   answered with the first try's result, never a second charge.
/// - **The host never sees a card number.** A session's instruments carry
///   a Worldline client session (ABI 1.1 `instruments`, kind
///   `client_session`): the merchant's page or app fetches the payment
///   products and the encryption key with it, and encrypts the card into a
///   JWE (`encryptedCustomerInput`) that only Worldline can open. The
///   adapter checks the JWE's shape and forwards it.
/// - **The payment alone decides**: continue, verify and webhooks read it
///   (`GET`); a returning payer's parameters and a webhook's body are not
///   believed. A webhook must carry a valid `X-GCS-Signature` under the key
///   its `X-GCS-KeyId` names.
/// - **A create with no usable answer** (timeout, dropped connection, 5xx,
///   1409) stays pending. Worldline cannot be searched by merchant
///   reference, so the adapter remembers the create (``WorldlineLostCreates``)
///   and verify replays it under the same idempotence key: Worldline answers
///   the first request's result, or processes it once. After a restart, the
///   payment's webhook (which names the host's payment id) settles it.
///
/// `providerReference` is Worldline's payment id (`3254564315_0`).
///
/// Config: `base_url`, `merchant_id`, `webhook_key_id` (and
/// `webhook_key_id_previous` during a rotation), optional `webhook_url`
/// (sent as `feedbacks.webhooksUrls`), `request_timeout_ms`. Secrets:
/// `api_key_id`, `api_secret`, `webhook_secret` (`webhook_secret_previous`).
final class WorldlineAdapter: PaymentAdapter {
    static let id = "worldline"
    static let version = "1.0.0"
    /// Worldline's payment product id of each method.
    static let products = ["visa": 1, "amex": 2, "mastercard": 3]
    static let methods = ["visa", "mastercard", "amex"]
    static let currencies = ["EUR", "USD", "GBP", "SEK", "DKK", "CHF", "SAR", "AED", "KWD"]
    /// How long a client session (and so a lost create's replay) lives.
    static let clientSessionLife: TimeInterval = 2 * 3600

    let host: AdapterHost
    let client: WorldlineClient
    let webhookKeys: [(id: String, secret: String)]
    let webhookURL: String?
    let lostCreates = WorldlineLostCreates()

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        _ = try configuration.providerURL(provider: "Worldline", example: "https://payment.direct.worldline-solutions.com")
        let merchant = try configuration.string("merchant_id", default: "")
        guard merchant.range(of: "^[A-Za-z0-9_-]{1,40}$", options: .regularExpression) != nil else {
            throw AdapterError.invalidConfiguration("config.merchant_id is missing or not 1 to 40 letters, digits, - or _: it is the PSPID from Worldline's Merchant Portal")
        }
        var keys: [(String, String)] = []
        for (config, secret) in [("webhook_key_id", "webhook_secret"), ("webhook_key_id_previous", "webhook_secret_previous")] {
            let id = try configuration.string(config, default: "")
            if !id.isEmpty { keys.append((id, secret)) }
        }
        guard !keys.isEmpty else {
            throw AdapterError.invalidConfiguration("config.webhook_key_id is missing or empty: it is the webhook key id from Worldline's Merchant Portal")
        }
        webhookKeys = keys
        let hook = try configuration.string("webhook_url", default: "")
        guard hook.isEmpty || hook.hasPrefix("https://") || hook.hasPrefix("http://") else {
            throw AdapterError.invalidConfiguration("config.webhook_url must be an http(s) URL (this gateway's /v1/webhooks/worldline)")
        }
        webhookURL = hook.isEmpty ? nil : hook
        client = try WorldlineClient(host: host, configuration: configuration, merchantID: merchant)
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: Self.methods,
                           operations: PaymentOperation.paymentOperations + [.instruments], currencies: Self.currencies)
    }

    /// Whether `id` looks like a Worldline payment id (`3254564315_0`).
    static func isPaymentID(_ id: String?) -> Bool {
        guard let id else { return false }
        return id.range(of: "^[0-9]{1,20}_[0-9]{1,4}$", options: .regularExpression) != nil
    }

    /// The payment id of `providerReference`, or an invalid-request error.
    static func paymentID(_ providerReference: String?) throws -> String {
        guard let id = providerReference, isPaymentID(id) else { throw AdapterError.invalidRequest("providerReference is not a Worldline payment id") }
        return id
    }
}
