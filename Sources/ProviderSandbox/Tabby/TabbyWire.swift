import Foundation
import GatewayPayloads
import Hummingbird
import NIOCore

/// Tabby's encodings: JSON with snake_case members, amounts as decimal
/// strings in major units with the currency's decimals (`"100.00"`,
/// `"1.234"` KWD), errors as `{"status": "error", "errorType": …, "error": …}`.
enum TabbyWire {
    struct Buyer: Codable, Sendable {
        var name: String?
        var email: String?
        var phone: String?
        var dob: String?
    }

    struct Address: Codable, Sendable {
        var city: String?
        var address: String?
        var zip: String?
    }

    struct Item: Codable, Sendable {
        var title: String?
        var description: String?
        var quantity: Int?
        var unitPrice: String?
        var category: String?
        var referenceId: String?
    }

    struct Order: Codable, Sendable {
        var referenceId: String?
        var items: [Item]?
        var taxAmount: String?
        var shippingAmount: String?
        var discountAmount: String?
    }

    struct MerchantURLs: Codable, Sendable {
        var success: String?
        var cancel: String?
        var failure: String?
    }

    struct CheckoutPayment: Decodable, Sendable {
        var amount: String?
        var currency: String?
        var description: String?
        var buyer: Buyer?
        var shippingAddress: Address?
        var order: Order?
        var meta: [String: String]?
    }

    /// `POST /api/v2/checkout`.
    struct CheckoutRequest: Decodable, Sendable {
        var payment: CheckoutPayment?
        var lang: String?
        var merchantCode: String?
        var merchantUrls: MerchantURLs?
    }

    /// `POST /api/v2/payments/{id}/captures` and `…/refunds`.
    struct MovementRequest: Decodable, Sendable {
        var amount: String?
        var referenceId: String?
        var reason: String?
    }

    /// A request Tabby refuses: the HTTP status, `errorType` and `error` text.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var type: String
        var message: String

        static func badData(_ message: String) -> Refusal { Refusal(status: .badRequest, type: "bad_data", message: message) }
        static func notFound(_ message: String) -> Refusal { Refusal(status: .notFound, type: "not_found", message: message) }
        static func noPermission(_ message: String) -> Refusal { Refusal(status: .forbidden, type: "no_permission", message: message) }
        static func conflict(_ message: String) -> Refusal { Refusal(status: .conflict, type: "conflict", message: message) }

        var response: Response { TabbyWire.response(status, TabbyWire.error(type, message)) }
    }

    /// The request body, snake_case keys; a malformed body is `bad_data`.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try await SimulatorJSON.decodeSnakeCase(type, request) { _ in Refusal.badData("could not decode request") }
    }

    /// `text` as money in `currency`: a positive decimal string with at most
    /// the currency's decimals.
    static func money(_ text: String?, currency: String, field: String) throws(Refusal) -> Money {
        guard let text, !text.isEmpty else { throw .badData("\(field) is required") }
        guard let money = try? Money(decimal: text, currency: currency), money.value > 0 else {
            throw .badData("\(field) must be a positive amount with at most \(Currency(code: currency)?.exponent ?? 2) decimals for \(currency)")
        }
        return money
    }

    /// Money as Tabby writes it: `"100.00"`.
    static func amount(_ value: Int64, _ currency: String) -> String {
        (try? Money(value: value, currency: currency).decimalString()) ?? "0"
    }

    static func error(_ type: String, _ message: String) -> [String: Any] {
        ["status": "error", "errorType": type, "error": message]
    }

    static func response(_ status: HTTPResponse.Status, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, SimulatorJSON.text(document))
    }

    /// HTTP 401 `not_authorized` unless the request carries the sandbox secret key.
    static func unauthorized(_ request: Request) -> Response? {
        guard request.headers[.authorization] != "Bearer " + TabbySimulator.secretKey else { return nil }
        return response(.unauthorized, error("not_authorized", "invalid or missing secret key"))
    }
}
