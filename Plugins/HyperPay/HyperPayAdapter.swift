import Foundation
import GatewayAdapterSDK

/// HyperPay (OPPWA COPYandPAY) for Visa, Mastercard, mada and Apple Pay.
///
/// authorize prepares a checkout (`POST /v1/checkouts`, DB for automatic
/// capture, PA for manual) and answers `pending` with a `redirect` to the page
/// hosting the payment widget; continue and verify ask `GET
/// /v1/checkouts/{id}/payment` (what the payer's browser brought back is
/// never trusted) and classify its result code (``HyperPayResultClass``);
/// capture and void are back-office CP and RV on the payment, refund an RF
/// on each capture it draws on (or on the payment, for a debit).
/// Webhooks are AES-256-GCM encrypted with the `webhook_key` secret.
///
/// Config: `base_url` (`https://eu-prod.oppwa.com`), `entity_id` (cards and
/// Apple Pay), `mada_entity_id` (mada has its own entity), `widget_page_url`
/// (the page that embeds `paymentWidgets.js` for `{checkoutId}` with
/// `{brands}`), optional `request_timeout_ms` and `sandbox`. Secrets:
/// `access_token`, `webhook_key`. Without a `webhook_key` the adapter refuses
/// to start, unless `sandbox` is true (a test setup), where it starts and
/// refuses every notification.
final class HyperPayAdapter: PaymentAdapter {
    static let id = "hyperpay"
    static let version = "1.0.0"

    /// The OPPWA brand of each method.
    static let brands = ["visa": "VISA", "mastercard": "MASTER", "mada": "MADA", "applepay": "APPLEPAY"]
    static let currencies = ["SAR", "AED", "KWD", "BHD", "OMR", "QAR", "JOD", "USD", "EUR"]

    /// `amount` as OPPWA takes it: `[0-9]{1,10}\.[0-9]{2}`, two decimals
    /// whatever the currency (OPPWA's parameter reference; HyperPay's own
    /// plugins send KWD, BHD, OMR and JOD so too). A three-decimal amount
    /// that two cannot carry (`1.234 KWD`) is refused before anything is
    /// sent: rounding it would charge the payer another amount.
    static func amountText(_ amount: Money) throws -> String {
        guard let text = try? amount.decimalString(fractionDigits: 2), text.split(separator: ".")[0].count <= 10 else {
            throw AdapterError.invalidRequest(twoDecimals(amount))
        }
        return text
    }

    static func twoDecimals(_ amount: Money) -> String {
        let shown = (try? amount.decimalString()) ?? "\(amount.value) minor units"
        return "HyperPay takes amounts with two decimals and at most ten digits before them (OPPWA's amount format): \(shown) \(amount.currency.prefix(8)) cannot be sent exactly"
    }

    let host: AdapterHost
    let client: ProviderHTTPClient
    let entityId: String
    let madaEntityId: String
    let widgetPageURL: String

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        client = try ProviderHTTPClient(host: host, provider: "HyperPay", configuration: configuration, example: "https://eu-prod.oppwa.com",
                                        authorization: .bearer(secret: "access_token"))
        entityId = try Self.required("entity_id", configuration)
        madaEntityId = try Self.required("mada_entity_id", configuration)
        widgetPageURL = try Self.required("widget_page_url", configuration)
        guard widgetPageURL.contains("{checkoutId}") else {
            throw AdapterError.invalidConfiguration("config.widget_page_url must contain {checkoutId}: it is where the payer is sent to pay that checkout")
        }
        if try !configuration.bool("sandbox", default: false), !host.hasSecret("webhook_key") {
            throw AdapterError.invalidConfiguration("the webhook_key secret is missing or empty: it is the key HyperPay encrypts its notifications with, without which none can be authenticated. Set it (or config.sandbox to true in a test setup, where every notification is then refused)")
        }
    }

    private static func required(_ key: String, _ configuration: AdapterConfiguration) throws -> String {
        let value = try configuration.string(key, default: "")
        guard !value.isEmpty else { throw AdapterError.invalidConfiguration("config.\(key) is required for HyperPay and is missing or empty") }
        return value
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: ["visa", "mastercard", "mada", "applepay"],
                           operations: PaymentOperation.paymentOperations, currencies: Self.currencies)
    }

    /// The payer is back from the widget: the checkout's status says what happened.
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        try await status(HyperPayReference(request.providerReference))
    }

    /// `CP` on the authorization.
    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        try await backOffice("CP", request.providerReference, amount: request.amount, key: request.idempotencyKey)
    }

    /// `RV` on the authorization.
    func void(_ request: VoidRequest) async throws -> AdapterResult {
        try await backOffice("RV", request.providerReference, amount: nil, key: request.idempotencyKey)
    }

    /// The entity a checkout of `kind` is prepared and queried with.
    func entity(_ kind: HyperPayReference.Kind) -> String { kind == .mada ? madaEntityId : entityId }
}
