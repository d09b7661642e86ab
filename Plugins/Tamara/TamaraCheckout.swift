import Foundation
import GatewayAdapterSDK

/// authorize: the checkout session.
extension TamaraAdapter {
    /// Creates the checkout session and sends the payer to Tamara.
    ///
    /// `order_reference_id` is the host's payment id (stable across retries of
    /// the attempt; notifications and the order carry it back), `order_number`
    /// the merchant's order id. The payer needs a first and last name and a
    /// phone number (`payer`, or `instrument.first_name`, `last_name`,
    /// `phone_number`), and a shipping address (`instrument.shipping_address`
    /// with `line1` and `city`; optional `line2`, `region`, `postal_code`).
    /// `instrument.payment_type` and `instrument.instalments` override the config.
    ///
    /// A checkout session moves no money and its `checkout_url` reaches the
    /// payer only through this answer, so when no answer comes back (timeout,
    /// dropped connection, 5xx) the attempt provably did not charge: it fails
    /// as `provider_error`, safe to retry elsewhere.
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard request.method == "tamara" else { throw AdapterError.invalidRequest("method \(request.method.prefix(40)) is not offered by Tamara (tamara)") }
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        guard let defaultCountry = Self.countryOfCurrency[request.amount.currency] else {
            throw AdapterError.invalidRequest("amount.currency \(request.amount.currency.prefix(8)) is not one Tamara takes (\(Self.currencies.joined(separator: ", ")))")
        }
        let country = request.country?.uppercased() ?? defaultCountry
        guard let back = request.returnUrl, back.hasPrefix("https://") || back.hasPrefix("http://") else {
            throw AdapterError.invalidRequest("returnUrl (http or https) is required: Tamara sends the payer back to it")
        }
        let body = try checkoutBody(request, country: country, back: back)
        let answer: TamaraAnswer
        do {
            answer = try await client.send("POST", "/checkout", .json(body))
        } catch let error as HTTPEgressError {
            return try await lostCheckout(request, why: "no answer to creating the checkout session (\(error.message))")
        }
        // Throttled: refused before anything was made.
        if answer.status == 429 { return Self.notCreated("creating the checkout session answered \(answer.summary)") }
        if answer.status >= 500 {
            return try await lostCheckout(request, why: "creating the checkout session answered \(answer.summary)")
        }
        guard answer.ok, let created = answer.decode(TamaraWire.CheckoutAnswer.self), let orderId = created.orderId,
              let checkoutId = created.checkoutId, let url = created.checkoutUrl,
              TamaraReference.isIdentifier(orderId), TamaraReference.isIdentifier(checkoutId) else {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .providerError, message: "Tamara refused the checkout session: \(answer.summary)",
                retryable: false, safeToRetryElsewhere: true, providerCode: answer.errorCode ?? "HTTP \(answer.status)"),
                providerStatus: answer.errorCode)
        }
        let reference = TamaraReference(capture: request.capture, orderId: orderId, checkoutId: checkoutId)
        return AdapterResult(status: .pending, providerReference: reference.text, amount: request.amount,
                             action: PaymentAction(type: .redirect, url: url, method: "GET"), providerStatus: created.status ?? "new")
    }

    /// The checkout's answer was lost: whether Tamara made an order is read
    /// under the reference (``settleLostCheckout(_:capture:why:unreadable:)``).
    /// Its checkout URL reached no one, so a read that says nothing usable
    /// (no answer, an error, another order) leaves it not created; only an
    /// order past `new` is settled.
    private func lostCheckout(_ request: AuthorizeRequest, why: String) async throws -> AdapterResult {
        try await settleLostCheckout(request.paymentId, capture: request.capture, why: why) { detail in Self.notCreated("\(why); \(detail)") }
    }

    static func notCreated(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(
            code: .providerError, message: "Tamara: \(why); no checkout reached the payer, so nothing was charged",
            retryable: true, safeToRetryElsewhere: true))
    }

    private func checkoutBody(_ request: AuthorizeRequest, country: String, back: String) throws -> TamaraWire.Checkout {
        let instrument = request.instrument ?? [:]
        func text(_ key: String, in object: [String: JSONValue]? = nil) throws -> String? {
            guard let value = (object ?? instrument)[key] else { return nil }
            guard case .string(let s) = value, !s.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw AdapterError.invalidRequest("instrument.\(key) must be a non-empty string")
            }
            return s
        }
        let parts = (request.payer?.name ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        guard let first = try text("first_name") ?? parts.first, let last = try text("last_name") ?? (parts.count == 2 ? parts[1] : nil) else {
            throw AdapterError.invalidRequest("Tamara needs the payer's first and last name: payer.name (\"Mona Lisa\") or instrument.first_name and instrument.last_name")
        }
        guard let phone = try text("phone_number") ?? request.payer?.phone, !phone.isEmpty else {
            throw AdapterError.invalidRequest("Tamara needs the payer's phone number: payer.phone or instrument.phone_number")
        }
        guard case .object(let address)? = instrument["shipping_address"] else {
            throw AdapterError.invalidRequest("Tamara needs a shipping address: instrument.shipping_address {line1, city} (optional line2, region, postal_code)")
        }
        guard let line1 = try text("line1", in: address), let city = try text("city", in: address) else {
            throw AdapterError.invalidRequest("instrument.shipping_address needs line1 and city")
        }
        var paymentType = self.paymentType
        if let asked = try text("payment_type") {
            guard ["PAY_BY_INSTALMENTS", "PAY_NOW"].contains(asked) else { throw AdapterError.invalidRequest("instrument.payment_type must be PAY_BY_INSTALMENTS or PAY_NOW") }
            paymentType = asked
        }
        var instalments = self.instalments
        if let value = instrument["instalments"] {
            guard let n = value.integerValue, (2...12).contains(n) else {
                throw AdapterError.invalidRequest("instrument.instalments must be an integer from 2 to 12")
            }
            instalments = Int(n)
        }
        let total = try TamaraMoney(request.amount)
        let zero = try TamaraMoney(Money(value: 0, currency: request.amount.currency))
        let order = String(request.orderId.prefix(128))
        return TamaraWire.Checkout(
            orderReferenceId: request.paymentId, orderNumber: order, totalAmount: total, shippingAmount: zero, taxAmount: zero,
            description: "Order \(order)", countryCode: country, paymentType: paymentType,
            instalments: paymentType == "PAY_NOW" ? nil : instalments, locale: locale,
            items: [TamaraWire.Item(referenceId: order, type: "Digital", name: "Order \(order)", sku: order, quantity: 1, totalAmount: total)],
            consumer: TamaraWire.Consumer(firstName: first, lastName: last, phoneNumber: phone, email: request.payer?.email),
            shippingAddress: TamaraWire.Address(
                firstName: first, lastName: last, line1: line1, line2: try text("line2", in: address), region: try text("region", in: address),
                postalCode: try text("postal_code", in: address), city: city, countryCode: country, phoneNumber: phone),
            merchantUrl: TamaraWire.MerchantURL(success: back, failure: back, cancel: back, notification: notificationURL),
            additionalData: ["capture": request.capture.rawValue])
    }
}
