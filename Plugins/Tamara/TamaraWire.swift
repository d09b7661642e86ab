import Foundation
import GatewayAdapterSDK

/// Money as Tamara writes it: `{"amount": 100.5, "currency": "SAR"}`, the
/// amount a JSON number in major units. It is carried as `Decimal` (base 10,
/// exact) from and to the currency's minor units, never through `Double`.
struct TamaraMoney: Codable, Sendable {
    var amount: Decimal
    var currency: String

    init(_ money: Money) throws {
        let text: String
        do { text = try money.decimalString() } catch { throw AdapterError.invalidRequest("amount: \(error)") }
        guard let amount = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw AdapterError.invalidRequest("amount \(text) cannot be written as a number")
        }
        self.amount = amount
        currency = money.currency
    }

    /// The amount in minor units, when it has no more decimals than the currency.
    var money: Money? { try? Money(decimal: "\(amount)", currency: currency) }
}

/// The members of Tamara's requests and answers the adapter uses.
enum TamaraWire {
    struct Consumer: Encodable, Sendable {
        var firstName: String
        var lastName: String
        var phoneNumber: String
        var email: String?
    }

    struct Address: Encodable, Sendable {
        var firstName: String
        var lastName: String
        var line1: String
        var line2: String?
        var region: String?
        var postalCode: String?
        var city: String
        var countryCode: String
        var phoneNumber: String?
    }

    struct Item: Encodable, Sendable {
        var referenceId: String
        var type: String
        var name: String
        var sku: String
        var quantity: Int
        var totalAmount: TamaraMoney
    }

    struct MerchantURL: Encodable, Sendable {
        var success: String
        var failure: String
        var cancel: String
        var notification: String
    }

    /// `POST /checkout`.
    struct Checkout: Encodable, Sendable {
        var orderReferenceId: String
        var orderNumber: String
        var totalAmount: TamaraMoney
        var shippingAmount: TamaraMoney
        var taxAmount: TamaraMoney
        var description: String
        var countryCode: String
        var paymentType: String
        var instalments: Int?
        var locale: String?
        var items: [Item]
        var consumer: Consumer
        var shippingAddress: Address
        var merchantUrl: MerchantURL
        /// `{"capture": "automatic" | "manual"}`: read back from the order by
        /// the webhook, which is not told the capture mode otherwise.
        var additionalData: [String: String]
    }

    struct CheckoutAnswer: Decodable, Sendable {
        var orderId: String?
        var checkoutId: String?
        var checkoutUrl: String?
        var status: String?
    }

    /// `GET /orders/{id}`.
    struct Order: Decodable, Sendable {
        var orderId: String?
        var orderReferenceId: String?
        var status: String?
        var totalAmount: TamaraMoney?
        var capturedAmount: TamaraMoney?
        var refundedAmount: TamaraMoney?
        var canceledAmount: TamaraMoney?
        var authorizedAmount: TamaraMoney?
        var additionalData: [String: String]?

        func value(_ amount: TamaraMoney?) -> Int64 { amount?.money?.value ?? 0 }
        var currency: String? { totalAmount?.currency }
        /// Authorised and neither captured nor canceled.
        var capturable: Int64 { value(totalAmount) - value(canceledAmount) - value(capturedAmount) }
    }

    struct ShippingInfo: Encodable, Sendable {
        var shippedAt: String
        var shippingCompany: String
    }

    /// `POST /payments/capture`.
    struct Capture: Encodable, Sendable {
        var orderId: String
        var totalAmount: TamaraMoney
        var shippingInfo: ShippingInfo
    }

    struct CaptureAnswer: Decodable, Sendable {
        var captureId: String?
        var status: String?
        var capturedAmount: TamaraMoney?
    }

    /// `POST /payments/simplified-refund/{order_id}`.
    struct Refund: Encodable, Sendable {
        var totalAmount: TamaraMoney
        var comment: String
        var merchantRefundId: String
    }

    struct RefundAnswer: Decodable, Sendable {
        var refundId: String?
        var status: String?
        var refundedAmount: TamaraMoney?
    }

    /// `POST /orders/{id}/cancel`.
    struct Cancel: Encodable, Sendable {
        var totalAmount: TamaraMoney
    }

    struct CancelAnswer: Decodable, Sendable {
        var cancelId: String?
        var status: String?
    }

    struct VoidAnswer: Decodable, Sendable {
        var orderWasVoided: Bool?
    }
}
