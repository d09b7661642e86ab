import Foundation
import GatewayPayloads
import Hummingbird
import NIOCore

/// Tamara's encodings: JSON bodies with snake_case members, amounts as
/// `{"amount": <JSON number in major units>, "currency": "SAR"}`, errors as
/// `{"message": …, "errors": [{"error_code": …, "data": …}]}`.
enum TamaraWire {
    /// Tamara's currencies and the country each belongs to.
    static let countries: [String: String] = ["SA": "SAR", "AE": "AED", "KW": "KWD", "BH": "BHD", "OM": "OMR", "QA": "QAR"]

    struct Amount: Codable, Sendable {
        var amount: Decimal
        var currency: String
    }

    struct Consumer: Codable, Sendable {
        var firstName: String?
        var lastName: String?
        var phoneNumber: String?
        var email: String?
    }

    struct MerchantURL: Codable, Sendable {
        var success: String?
        var failure: String?
        var cancel: String?
        var notification: String?
    }

    struct Address: Codable, Sendable {
        var firstName: String?
        var lastName: String?
        var line1: String?
        var city: String?
        var countryCode: String?
    }

    struct Item: Codable, Sendable {
        var referenceId: String?
        var type: String?
        var name: String?
        var sku: String?
        var quantity: Decimal?
        var totalAmount: Amount?
    }

    struct CheckoutRequest: Decodable, Sendable {
        var orderReferenceId: String?
        var orderNumber: String?
        var totalAmount: Amount?
        var shippingAmount: Amount?
        var taxAmount: Amount?
        var description: String?
        var countryCode: String?
        var paymentType: String?
        var instalments: Int?
        var items: [Item]?
        var consumer: Consumer?
        var shippingAddress: Address?
        var merchantUrl: MerchantURL?
        var additionalData: [String: String]?
        var expiresInMinutes: Int?
    }

    struct CaptureRequest: Decodable, Sendable {
        var orderId: String?
        var totalAmount: Amount?
        var shippingInfo: ShippingInfo?
    }

    /// A capture's `shipping_info`: `shipped_at` and `shipping_company`
    /// required, the tracking members optional and nullable (the official
    /// PHP SDK sends them as `null` when it has none).
    struct ShippingInfo: Decodable, Sendable {
        var shippedAt: String?
        var shippingCompany: String?
        var trackingNumber: String?
        var trackingUrl: String?
    }

    struct RefundRequest: Decodable, Sendable {
        var totalAmount: Amount?
        var comment: String?
        var merchantRefundId: String?
    }

    struct CancelRequest: Decodable, Sendable {
        var totalAmount: Amount?
    }

    /// A field the request got wrong.
    struct Invalid: Error {
        var code: String
        var field: String
        var message: String
    }

    /// A request body decoded with snake_case keys; a malformed body is an `Invalid`.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try await SimulatorJSON.decodeSnakeCase(type, request) { error in
            Invalid(code: "invalid_json", field: "body", message: "the body is not the expected JSON: \(error)")
        }
    }

    /// `amount` as money in its currency: positive, in a currency Tamara
    /// takes, with no more decimals than the currency has.
    static func money(_ amount: Amount?, field: String, allowZero: Bool = false) throws(Invalid) -> Money {
        guard let amount else { throw Invalid(code: "\(field)_required", field: field, message: "\(field) is required") }
        guard countries.values.contains(amount.currency) else {
            throw Invalid(code: "invalid_currency", field: "\(field).currency",
                          message: "currency must be one of \(Set(countries.values).sorted().joined(separator: ", "))")
        }
        guard let money = try? Money(decimal: "\(amount.amount)", currency: amount.currency),
              money.value > 0 || (allowZero && money.value == 0) else {
            throw Invalid(code: "invalid_amount", field: "\(field).amount",
                          message: "amount must be a positive number with at most the currency's decimals (\(Currency(code: amount.currency)?.exponent ?? 2))")
        }
        return money
    }

    /// Money as Tamara writes it: a JSON number in major units.
    static func amount(_ money: Money) -> [String: Any] {
        ["amount": NumberText((try? money.decimalString()) ?? "0"), "currency": money.currency]
    }

    /// A number written as its exact decimal text (never through `Double`).
    struct NumberText { var text: String; init(_ text: String) { self.text = text } }

    /// `{"message": …, "errors": [{"error_code": …, "data": …}]}`.
    static func error(_ message: String, _ code: String, data: [String: Any]? = nil) -> [String: Any] {
        var entry: [String: Any] = ["error_code": code]
        if let data { entry["data"] = data }
        return ["message": message, "errors": [entry]]
    }

    static func invalid(_ invalid: Invalid) -> Response {
        response(.badRequest, error("Invalid request", invalid.code, data: ["field": invalid.field, "message": invalid.message]))
    }

    static func notFound(_ what: String) -> Response {
        response(.notFound, error("\(what) not found", "\(what.lowercased())_not_found"))
    }

    /// JSON text of `value`, numbers from ``NumberText`` written verbatim.
    static func json(_ value: Any) -> String {
        switch value {
        case let number as NumberText: return number.text
        case let text as String: return quoted(text)
        case let flag as Bool: return flag ? "true" : "false"
        case let int as Int: return String(int)
        case let int as Int64: return String(int)
        case let array as [Any]: return "[" + array.map(json).joined(separator: ",") + "]"
        case let object as [String: Any]:
            return "{" + object.keys.sorted().map { quoted($0) + ":" + json(object[$0]!) }.joined(separator: ",") + "}"
        default: return "null"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func response(_ status: HTTPResponse.Status, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, json(document))
    }

    /// HTTP 401 unless the request carries the sandbox API token.
    static func unauthorized(_ request: Request) -> Response? {
        guard request.headers[.authorization] != "Bearer " + TamaraSimulator.apiToken else { return nil }
        return response(.unauthorized, error("Unauthorized", "unauthorized"))
    }
}
