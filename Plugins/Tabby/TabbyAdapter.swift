import Foundation
import GatewayAdapterSDK

/// Tabby, buy now pay later, as the method `tabby` (SAR in Saudi Arabia, AED
/// in the UAE, KWD in Kuwait).
///
/// authorize creates a checkout session (`POST /api/v2/checkout`) on the
/// region's host and answers `pending` with a `redirect` to Tabby's hosted
/// page, or `failed` (`bnpl_declined`) when pre-scoring rejects the buyer.
/// continue and verify read the payment (`GET /api/v2/payments/{id}`; the
/// payer's return is never trusted). capture and refund carry a digest of
/// the request's idempotency key as Tabby's `reference_id` (40 hex
/// characters), so a retry never moves money twice; void closes an uncaptured authorization (`POST …/close`).
/// Webhooks are confirmed by fetching the payment they name
/// (``webhook(_:)``).
///
/// **Automatic capture.** Tabby only authorizes: the merchant captures. For
/// a session with automatic capture, the first continue, verify or webhook
/// that finds the payment AUTHORIZED captures what is left of it, with the
/// host's payment id as `reference_id`, so racing calls capture once.
///
/// Config: `base_url_sa` (`https://api.tabby.sa`) and `base_url_ai`
/// (`https://api.tabby.ai`), at least one; `merchant_code_sa`,
/// `merchant_code_ai` (or one `merchant_code` for both); optional `lang`
/// (en, ar), `request_timeout_ms` and `sandbox`; `webhook_header`, the
/// header name registered with Tabby's webhook. Secrets: `secret_key` and
/// `webhook_header_value`.
///
/// **Webhooks are never taken on trust.** Tabby signs nothing: the header
/// registered with its webhook is all that tells Tabby's notifications from
/// anyone's. Without `webhook_header` and a `webhook_header_value` secret the
/// adapter refuses to start, unless `sandbox` is true (a test setup); it
/// then starts, and refuses every notification.
final class TabbyAdapter: PaymentAdapter {
    static let id = "tabby"
    static let version = "1.0.0"

    let host: AdapterHost
    let client: TabbyClient
    let merchantCodes: [TabbyRegion: String]
    let lang: String
    let webhookHeader: String?

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        var bases: [TabbyRegion: String] = [:]
        var codes: [TabbyRegion: String] = [:]
        let sharedCode = try configuration.string("merchant_code", default: "")
        for region in TabbyRegion.allCases {
            let key = "base_url_\(region.rawValue)"
            if try !configuration.string(key, default: "").isEmpty {
                bases[region] = try configuration.providerURL(key, provider: "Tabby", example: "https://api.tabby.\(region.rawValue)")
            }
            let code = try configuration.string("merchant_code_\(region.rawValue)", default: sharedCode)
            if !code.isEmpty { codes[region] = code }
        }
        guard !bases.isEmpty else {
            throw AdapterError.invalidConfiguration("config.base_url_sa (https://api.tabby.sa, Saudi Arabia) or config.base_url_ai (https://api.tabby.ai, UAE and Kuwait) is required for Tabby; both are missing or empty")
        }
        merchantCodes = codes
        lang = try configuration.string("lang", default: "en")
        guard lang == "en" || lang == "ar" else { throw AdapterError.invalidConfiguration("config.lang must be en or ar") }
        let header = try configuration.string("webhook_header", default: "")
        guard header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw AdapterError.invalidConfiguration("config.webhook_header must be an HTTP header name (letters, digits, - and _)")
        }
        webhookHeader = header.isEmpty ? nil : header.lowercased()
        if try !configuration.bool("sandbox", default: false) {
            guard webhookHeader != nil else {
                throw AdapterError.invalidConfiguration("config.webhook_header is missing or empty: Tabby signs no webhook, so the header registered with Tabby's webhook, and its value in the webhook_header_value secret, are what tell Tabby's notifications from forged ones. Set both (or config.sandbox to true in a test setup, where every notification is then refused)")
            }
            guard host.hasSecret("webhook_header_value") else {
                throw AdapterError.invalidConfiguration("the webhook_header_value secret is missing or empty: it is the value Tabby sends in the \(header) header, without which any notification would be taken as Tabby's. Set it (or config.sandbox to true in a test setup, where every notification is then refused)")
            }
        }
        client = TabbyClient(host: host, bases: bases, timeoutMilliseconds: try configuration.requestTimeoutMilliseconds())
    }

    var description: AdapterDescription {
        let currencies = TabbyRegion.allCases.filter { client.regions[$0] != nil }.flatMap(\.currencies)
        return AdapterDescription(id: Self.id, version: Self.version, methods: ["tabby"], operations: PaymentOperation.paymentOperations,
                                  currencies: currencies)
    }
}
