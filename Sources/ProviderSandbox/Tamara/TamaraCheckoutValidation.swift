import Foundation
import GatewayPayloads

/// What `POST /checkout` requires, checked as Tamara checks it: the members
/// its API reference marks required, amounts in the currency of
/// `country_code` with at most that currency's decimals, and http(s)
/// merchant URLs. The first fault found is the answer.
extension TamaraAPI {
    static func order(from body: TamaraWire.CheckoutRequest) throws(TamaraWire.Invalid) -> TamaraOrder {
        func required(_ value: String?, _ field: String, max: Int = 255) throws(TamaraWire.Invalid) -> String {
            guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw TamaraWire.Invalid(code: "\(field.replacingOccurrences(of: ".", with: "_"))_required", field: field, message: "\(field) is required")
            }
            guard value.count <= max else { throw TamaraWire.Invalid(code: "invalid_length", field: field, message: "\(field) is at most \(max) characters") }
            return value
        }
        let reference = try required(body.orderReferenceId, "order_reference_id")
        let total = try TamaraWire.money(body.totalAmount, field: "total_amount")
        for (amount, field) in [(body.shippingAmount, "shipping_amount"), (body.taxAmount, "tax_amount")] {
            let money = try TamaraWire.money(amount, field: field, allowZero: true)
            guard money.currency == total.currency else {
                throw TamaraWire.Invalid(code: "currency_mismatch", field: "\(field).currency", message: "must be the total's currency \(total.currency)")
            }
        }
        let country = try required(body.countryCode, "country_code", max: 2)
        guard let currency = TamaraWire.countries[country] else {
            throw TamaraWire.Invalid(code: "invalid_country_code", field: "country_code", message: "must be one of \(TamaraWire.countries.keys.sorted().joined(separator: ", "))")
        }
        guard currency == total.currency else {
            throw TamaraWire.Invalid(code: "currency_not_supported_for_country", field: "total_amount.currency",
                                     message: "orders in \(country) are paid in \(currency), not \(total.currency)")
        }
        let description = try required(body.description, "description", max: 256)
        let paymentType = body.paymentType ?? "PAY_BY_INSTALMENTS"
        guard paymentType == "PAY_BY_INSTALMENTS" || paymentType == "PAY_NOW" else {
            throw TamaraWire.Invalid(code: "invalid_payment_type", field: "payment_type", message: "must be PAY_BY_INSTALMENTS or PAY_NOW")
        }
        if let instalments = body.instalments, !(2...12).contains(instalments) {
            throw TamaraWire.Invalid(code: "invalid_instalments", field: "instalments", message: "must be from 2 to 12")
        }
        guard let items = body.items, !items.isEmpty else {
            throw TamaraWire.Invalid(code: "items_required", field: "items", message: "at least one item is required")
        }
        for (index, item) in items.enumerated() {
            _ = try required(item.referenceId, "items[\(index)].reference_id")
            _ = try required(item.name, "items[\(index)].name")
            _ = try required(item.sku, "items[\(index)].sku", max: 128)
            _ = try required(item.type, "items[\(index)].type")
            guard let quantity = item.quantity, quantity > 0 else {
                throw TamaraWire.Invalid(code: "invalid_quantity", field: "items[\(index)].quantity", message: "must be positive")
            }
            _ = try TamaraWire.money(item.totalAmount, field: "items[\(index)].total_amount", allowZero: true)
        }
        let consumer = body.consumer ?? TamaraWire.Consumer()
        _ = try required(consumer.firstName, "consumer.first_name")
        _ = try required(consumer.lastName, "consumer.last_name")
        _ = try required(consumer.phoneNumber, "consumer.phone_number")
        let address = body.shippingAddress ?? TamaraWire.Address()
        _ = try required(address.firstName, "shipping_address.first_name")
        _ = try required(address.lastName, "shipping_address.last_name")
        _ = try required(address.line1, "shipping_address.line1")
        _ = try required(address.city, "shipping_address.city")
        _ = try required(address.countryCode, "shipping_address.country_code", max: 2)
        let urls = body.merchantUrl ?? TamaraWire.MerchantURL()
        for (url, field) in [(urls.success, "success"), (urls.failure, "failure"), (urls.cancel, "cancel"), (urls.notification, "notification")] {
            let text = try required(url, "merchant_url.\(field)", max: 1024)
            guard text.hasPrefix("https://") || text.hasPrefix("http://"), URL(string: text) != nil else {
                throw TamaraWire.Invalid(code: "invalid_url", field: "merchant_url.\(field)", message: "must be an http(s) URL")
            }
        }
        var order = TamaraOrder(
            orderId: SimulatorJSON.uuid(), checkoutId: SimulatorJSON.uuid(), referenceId: reference,
            orderNumber: body.orderNumber ?? reference, description: description, countryCode: country,
            paymentType: paymentType, instalments: paymentType == "PAY_NOW" ? nil : (body.instalments ?? 3),
            total: total, consumer: consumer, urls: urls, additionalData: body.additionalData)
        if let minutes = body.expiresInMinutes {
            guard (5...1440).contains(minutes) else {
                throw TamaraWire.Invalid(code: "invalid_expires_in_minutes", field: "expires_in_minutes", message: "must be from 5 to 1440")
            }
            order.expiresAfter = TimeInterval(minutes * 60)
        }
        return order
    }
}
