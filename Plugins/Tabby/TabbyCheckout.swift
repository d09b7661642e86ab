import Foundation
import GatewayAdapterSDK

/// authorize: the checkout session.
extension TabbyAdapter {
    /// Creates the checkout session on the region's host and sends the payer
    /// to Tabby's hosted page.
    ///
    /// The buyer needs an e-mail and a phone (`payer.email`, `payer.phone`);
    /// `payer.name` and `instrument.shipping_address` are sent when given:
    /// the host's address shape (the standard form `shipping-address-optional`:
    /// `line1`, `line2?`, `city`, `region?`, `postal_code?`), or Tabby's own
    /// `{address, city, zip?}`. `order.reference_id` is the host's payment id
    /// (the webhook maps a payment back with it), `meta.order_id` the
    /// merchant's order. The return URLs are the authorize request's
    /// `returnUrl` with `tabby_return=success|cancel|failure` added.
    ///
    /// A checkout session moves no money and its `web_url` reaches the payer
    /// only through this answer, so when no answer comes back (timeout,
    /// dropped connection, 5xx) nothing was charged: the attempt fails as
    /// `provider_error`, safe to retry elsewhere.
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard request.method == "tabby" else { throw AdapterError.invalidRequest("method \(request.method.prefix(40)) is not offered by Tabby (tabby)") }
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        let currency = request.amount.currency
        guard let region = TabbyRegion(currency: currency), let home = TabbyRegion.countryOfCurrency[currency] else {
            throw AdapterError.invalidRequest("amount.currency \(currency.prefix(8)) is not one Tabby takes (SAR, AED, KWD)")
        }
        if let country = request.country?.uppercased(), country != home {
            throw AdapterError.invalidRequest("Tabby takes \(currency) in \(home) only, and the payment's country is \(country.prefix(4)) (SAR: SA, AED: AE, KWD: KW)")
        }
        guard client.regions[region] != nil else {
            throw AdapterError.invalidRequest("\(currency) is paid on Tabby's \(region.rawValue) host, and config.base_url_\(region.rawValue) is not set")
        }
        guard let back = request.returnUrl, back.hasPrefix("https://") || back.hasPrefix("http://") else {
            throw AdapterError.invalidRequest("returnUrl (http or https) is required: Tabby sends the payer back to it")
        }
        let body = try checkoutBody(request, region: region, back: back)
        let answer: TabbyAnswer
        do {
            answer = try await client.send("POST", "/api/v2/checkout", region: region, body)
        } catch let error as HTTPEgressError {
            return Self.notCreated("no answer to creating the checkout session (\(error.message))")
        }
        if answer.status >= 500 || answer.status == 429 { return Self.notCreated("creating the checkout session answered \(answer.summary)") }
        guard answer.ok, let session = answer.decode(TabbyWire.CheckoutAnswer.self) else {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .providerError, message: "Tabby refused the checkout session: \(answer.summary)",
                retryable: false, safeToRetryElsewhere: true, providerCode: answer.errorType ?? "HTTP \(answer.status)"))
        }
        let paymentId = session.payment?.id
        let reference = paymentId.flatMap { TabbyReference.isIdentifier($0) ? TabbyReference(region: region, capture: request.capture, paymentId: $0) : nil }
        if session.status == "rejected" {
            let reason = session.configuration?.products?.installments?.rejectionReason ?? "rejected"
            return AdapterResult(status: .failed, providerReference: reference?.text, problem: AdapterProblem(
                code: .bnplDeclined, message: "Tabby's pre-scoring turned the buyer down (\(reason)); nothing was charged",
                retryable: false, safeToRetryElsewhere: true, providerCode: reason), providerStatus: "rejected")
        }
        guard session.status == "created", let reference,
              let url = session.configuration?.availableProducts?.installments?.compactMap(\.webUrl).first,
              url.hasPrefix("https://") || url.hasPrefix("http://") else {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .providerError, message: "Tabby answered the checkout session with status \(session.status ?? "none") and no usable payment page",
                retryable: true, safeToRetryElsewhere: true, providerCode: session.status))
        }
        let expires = session.payment?.expiresAt ?? Self.timestamp(host.now.addingTimeInterval(30 * 60))
        return AdapterResult(status: .pending, providerReference: reference.text, amount: request.amount,
                             action: PaymentAction(type: .redirect, url: url, method: "GET", expiresAt: expires),
                             providerStatus: session.payment?.status ?? "CREATED")
    }

    static func notCreated(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(
            code: .providerError, message: "Tabby: \(why); no payment page reached the payer, so nothing was charged",
            retryable: true, safeToRetryElsewhere: true))
    }

    private func checkoutBody(_ request: AuthorizeRequest, region: TabbyRegion, back: String) throws -> TabbyWire.Checkout {
        guard let email = request.payer?.email, email.contains("@") else {
            throw AdapterError.invalidRequest("Tabby needs the buyer's e-mail address: payer.email")
        }
        guard let phone = request.payer?.phone, phone.contains(where: \.isNumber) else {
            throw AdapterError.invalidRequest("Tabby needs the buyer's phone number: payer.phone")
        }
        var address: TabbyWire.Address?
        if let value = request.instrument?["shipping_address"] {
            guard case .object(let fields) = value else {
                throw AdapterError.invalidRequest("instrument.shipping_address must be an object {line1, line2, city, region, postal_code}")
            }
            func text(_ key: String) throws -> String? {
                guard let value = fields[key] else { return nil }
                guard case .string(let s) = value, !s.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw AdapterError.invalidRequest("instrument.shipping_address.\(key) must be a non-empty string")
                }
                return s
            }
            let lines = [try text("line1") ?? text("address"), try text("line2")].compactMap { $0 }
            guard let city = try text("city"), !lines.isEmpty else {
                throw AdapterError.invalidRequest("instrument.shipping_address needs city and line1")
            }
            address = TabbyWire.Address(city: city, address: lines.joined(separator: ", "), zip: try text("postal_code") ?? text("zip"))
        }
        let amount: String
        do { amount = try request.amount.decimalString() } catch { throw AdapterError.invalidRequest("amount: \(error)") }
        let order = String(request.orderId.prefix(128))
        func url(_ outcome: String) -> String { back + (back.contains("?") ? "&" : "?") + "tabby_return=" + outcome }
        return TabbyWire.Checkout(
            payment: TabbyWire.CheckoutPayment(
                amount: amount, currency: request.amount.currency, description: "Order \(order)",
                buyer: TabbyWire.Buyer(name: request.payer?.name, email: email, phone: phone), shippingAddress: address,
                order: TabbyWire.Order(referenceId: request.paymentId, items: [
                    TabbyWire.Item(title: "Order \(order)", quantity: 1, unitPrice: amount, category: "General", referenceId: order)]),
                meta: TabbyWire.Meta(orderId: order, capture: request.capture.rawValue)),
            lang: lang, merchantCode: merchantCodes[region],
            merchantUrls: TabbyWire.MerchantURLs(success: url("success"), cancel: url("cancel"), failure: url("failure")))
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
