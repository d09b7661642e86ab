import Foundation
import GatewayAdapterSDK

/// Swedbank Pay Checkout v3: payment orders, their native payment session
/// (Swish on this device or another, saved cards, Apple Pay, Google Pay) and
/// the web payment menu (all of it, restricted to some instruments, or one
/// instrument; the hosted card view for a new card).
///
/// - **One payment order per host attempt, never reused**: `payeeReference`
///   is the attempt's id, so a retried create is refused by Swedbank rather
///   than made twice, and a failed attempt's order is aborted before the
///   failure is answered, so that nothing can pay it later.
/// - **Every call after the create follows an `href` by `rel`**; an href on
///   another origin than `base_url` is never followed.
/// - **The order alone decides**: continue, verify and callbacks read it
///   (`GET`), and nothing a payer's return or a callback body says is trusted.
/// - **Automatic capture**: cards and wallets only authorize; under automatic
///   capture the first continue, verify or callback that finds the order
///   paid captures it, under a `payeeReference` made from the payment id, so
///   racing calls capture once. Swish is a sale (captured at once) and
///   cannot be held for a manual capture.
///
/// `providerReference` is `<automatic|manual>:<native|menu>:<order id>`.
///
/// Config: `base_url` (`https://api.payex.com`), `payee_id`, `payee_name`,
/// `callback_url` (this gateway's `/v1/webhooks/swedbankpay`),
/// `terms_of_service_url`, optional `language` (`en-US`), `user_agent`,
/// `request_timeout_ms`. Secret: `access_token`.
final class SwedbankPayAdapter: PaymentAdapter {
    static let id = "swedbankpay"
    static let version = "1.0.0"
    static let methods = ["swish", "visa", "mastercard", "applepay", "googlepay", "swedbankpay"]
    static let currencies = ["SEK", "NOK", "DKK", "EUR"]

    let host: AdapterHost
    let client: SwedbankPayClient
    let payeeID: String
    let payeeName: String?
    let language: String
    let callbackURL: String?
    let termsURL: String?
    let userAgent: String

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        client = try SwedbankPayClient(host: host, configuration: configuration)
        payeeID = try configuration.string("payee_id", default: "")
        guard !payeeID.isEmpty else {
            throw AdapterError.invalidConfiguration("config.payee_id is missing or empty: it is the merchant's payee id from Swedbank Pay's admin")
        }
        let name = try configuration.string("payee_name", default: "")
        payeeName = name.isEmpty ? nil : name
        language = try configuration.string("language", default: "en-US")
        guard language.range(of: "^[a-z]{2}-[A-Z]{2}$", options: .regularExpression) != nil else {
            throw AdapterError.invalidConfiguration("config.language must look like en-US or sv-SE")
        }
        let callback = try configuration.string("callback_url", default: "")
        callbackURL = callback.isEmpty ? nil : callback
        let terms = try configuration.string("terms_of_service_url", default: "")
        termsURL = terms.isEmpty ? nil : terms
        userAgent = try configuration.string("user_agent", default: "gateway/1.0")
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: Self.methods,
                           operations: PaymentOperation.paymentOperations + [.instruments], currencies: Self.currencies)
    }
}

/// `<automatic|manual>:<native|menu>:<order id>`.
struct SwedbankPayReference: Sendable {
    var capture: CaptureMode
    /// Whether the payer pays on the web menu (a problem there lets the payer
    /// try again on the same order) or through the native session.
    var menu: Bool
    var orderID: String

    var text: String { "\(capture.rawValue):\(menu ? "menu" : "native"):\(orderID)" }

    init(capture: CaptureMode, menu: Bool, orderID: String) {
        self.capture = capture
        self.menu = menu
        self.orderID = orderID
    }

    init?(_ text: String?) {
        guard let parts = text?.split(separator: ":", maxSplits: 2).map(String.init), parts.count == 3,
              let capture = CaptureMode(rawValue: parts[0]), parts[1] == "menu" || parts[1] == "native",
              Self.isOrderID(parts[2]) else { return nil }
        self.init(capture: capture, menu: parts[1] == "menu", orderID: parts[2])
    }

    static func isOrderID(_ id: String) -> Bool {
        id.range(of: "^/psp/paymentorders/[0-9a-f-]{32,36}$", options: .regularExpression) != nil
    }
}
