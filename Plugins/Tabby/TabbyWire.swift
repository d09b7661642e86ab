import Foundation
import GatewayAdapterSDK

/// The members of Tabby's requests and answers the adapter uses. Amounts are
/// decimal strings in major units with the currency's decimals (`"100.00"`,
/// `"1.234"` KWD), written from minor units by `Money.decimalString()`.
enum TabbyWire {
    struct Buyer: Encodable, Sendable {
        var name: String?
        var email: String
        var phone: String
    }

    struct Address: Encodable, Sendable {
        var city: String
        var address: String
        var zip: String?
    }

    struct Item: Encodable, Sendable {
        var title: String
        var quantity: Int
        var unitPrice: String
        var category: String
        var referenceId: String
    }

    struct Order: Encodable, Sendable {
        var referenceId: String
        var items: [Item]
    }

    /// `payment.meta`: `order_id` (the merchant's order) and `capture`
    /// (automatic or manual), read back by the webhook.
    struct Meta: Codable, Sendable {
        var orderId: String?
        var capture: String?
    }

    struct CheckoutPayment: Encodable, Sendable {
        var amount: String
        var currency: String
        var description: String
        var buyer: Buyer
        var shippingAddress: Address?
        var order: Order
        var meta: Meta
    }

    struct MerchantURLs: Encodable, Sendable {
        var success: String
        var cancel: String
        var failure: String
    }

    /// `POST /api/v2/checkout`.
    struct Checkout: Encodable, Sendable {
        var payment: CheckoutPayment
        var lang: String
        var merchantCode: String?
        var merchantUrls: MerchantURLs
    }

    struct Product: Decodable, Sendable { var webUrl: String? }
    struct AvailableProducts: Decodable, Sendable { var installments: [Product]? }
    struct ProductState: Decodable, Sendable {
        var isAvailable: Bool?
        var rejectionReason: String?
    }
    struct Products: Decodable, Sendable { var installments: ProductState? }
    struct Configuration: Decodable, Sendable {
        var availableProducts: AvailableProducts?
        var products: Products?
    }

    struct CheckoutAnswer: Decodable, Sendable {
        var id: String?
        var status: String?
        var payment: Payment?
        var configuration: Configuration?
    }

    struct Movement: Decodable, Sendable {
        var id: String?
        var amount: String?
        var referenceId: String?
    }

    struct OrderAnswer: Decodable, Sendable { var referenceId: String? }

    /// The payment object (`GET /api/v2/payments/{id}`, capture, refund and
    /// close answers, webhooks).
    struct Payment: Decodable, Sendable {
        var id: String?
        var status: String?
        var amount: String?
        var currency: String?
        var expiresAt: String?
        var order: OrderAnswer?
        var captures: [Movement]?
        var refunds: [Movement]?
        var meta: Meta?

        /// `text` in this payment's currency, when it is a valid amount.
        func money(_ text: String?) -> Money? {
            guard let text, let currency else { return nil }
            return try? Money(decimal: text, currency: currency)
        }

        var total: Int64 { money(amount)?.value ?? 0 }
        var captured: Int64 { (captures ?? []).reduce(0) { $0 + (money($1.amount)?.value ?? 0) } }
        var refunded: Int64 { (refunds ?? []).reduce(0) { $0 + (money($1.amount)?.value ?? 0) } }
    }

    /// `POST /api/v2/payments/{id}/captures` and `…/refunds`.
    struct MovementRequest: Encodable, Sendable {
        var amount: String
        var referenceId: String
        var reason: String?
    }
}
