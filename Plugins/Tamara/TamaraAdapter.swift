import Foundation
import GatewayAdapterSDK

/// Tamara, buy now pay later, as the method `tamara`.
///
/// authorize creates a checkout session (`POST /checkout`) and answers
/// `pending` with a `redirect` to Tamara's `checkout_url`. continue and
/// verify read the order (`GET /orders/{id}`; what the payer's browser
/// brought back is never trusted) and finish what Tamara requires: an
/// `approved` order is authorised (`POST /orders/{id}/authorise`), then, for
/// automatic capture, captured in full (``settle(_:_:depth:)``). capture,
/// refund and void are `POST /payments/capture`,
/// `POST /payments/simplified-refund/{id}` and `POST /orders/{id}/cancel`.
/// Notifications carry an HS256 JWT signed with the `notification_token`
/// secret (``TamaraJWT``); a verified `approved` one drives the same settling.
///
/// Config: `base_url` (`https://api.tamara.co`), `notification_url` (where
/// Tamara posts notifications: the host's webhook route), optional
/// `payment_type` (PAY_BY_INSTALMENTS or PAY_NOW), `instalments`, `locale`,
/// `shipping_company` (for captures), `request_timeout_ms` and `sandbox`.
/// Secrets: `api_token`, `notification_token`. Without a
/// `notification_token` the adapter refuses to start, unless `sandbox` is
/// true (a test setup), where it starts and refuses every notification.
final class TamaraAdapter: PaymentAdapter {
    static let id = "tamara"
    static let version = "1.0.0"

    /// The currencies Tamara takes and the country of each.
    static let countryOfCurrency = ["SAR": "SA", "AED": "AE", "KWD": "KW", "BHD": "BH", "OMR": "OM", "QAR": "QA"]
    static let currencies = ["SAR", "AED", "KWD", "BHD", "OMR", "QAR"]

    let host: AdapterHost
    let client: ProviderHTTPClient
    let notificationURL: String
    let paymentType: String
    let instalments: Int
    let locale: String?
    let shippingCompany: String

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        var client = try ProviderHTTPClient(host: host, provider: "Tamara", configuration: configuration, example: "https://api.tamara.co",
                                            authorization: .bearer(secret: "api_token"))
        client.jsonKeys = .snakeCase
        self.client = client
        notificationURL = try configuration.string("notification_url", default: "")
        guard notificationURL.hasPrefix("https://") || notificationURL.hasPrefix("http://") else {
            throw AdapterError.invalidConfiguration("config.notification_url is required: the http(s) URL of the host's Tamara webhook route, where Tamara posts order notifications")
        }
        paymentType = try configuration.string("payment_type", default: "PAY_BY_INSTALMENTS")
        guard ["PAY_BY_INSTALMENTS", "PAY_NOW"].contains(paymentType) else {
            throw AdapterError.invalidConfiguration("config.payment_type must be PAY_BY_INSTALMENTS or PAY_NOW")
        }
        instalments = try configuration.integer("instalments", default: 3)
        guard (2...12).contains(instalments) else { throw AdapterError.invalidConfiguration("config.instalments must be from 2 to 12") }
        let locale = try configuration.string("locale", default: "")
        guard locale.isEmpty || locale == "ar_SA" || locale == "en_US" else {
            throw AdapterError.invalidConfiguration("config.locale must be ar_SA or en_US when given")
        }
        self.locale = locale.isEmpty ? nil : locale
        shippingCompany = try configuration.string("shipping_company", default: "unspecified")
        if try !configuration.bool("sandbox", default: false), !host.hasSecret("notification_token") {
            throw AdapterError.invalidConfiguration("the notification_token secret is missing or empty: it is the key Tamara signs its notifications with, without which none can be authenticated. Set it (or config.sandbox to true in a test setup, where every notification is then refused)")
        }
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: ["tamara"], operations: PaymentOperation.paymentOperations,
                           currencies: Self.currencies)
    }
}
