import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

/// STC Pay's DirectPayment V4 encodings: JSON with PascalCase members, each
/// request wrapped as `{"<Op>V4RequestMessage": {…}}` and each answer as
/// `{"<Op>V4ResponseMessage": {…}}`; amounts as JSON numbers in SAR
/// (`150.5`), read and written through `Decimal`, never `Double`; errors as
/// `{"Code": 2031, "Text": "…"}` with HTTP 400.
enum STCPayWire {
    /// `DirectPaymentAuthorize`.
    struct AuthorizeRequest: Decodable, Sendable {
        var MobileNo: String?
        var RefNum: String?
        var BillNumber: String?
        var Amount: Decimal?
        var BranchID: String?
        var TellerID: String?
        var DeviceID: String?
        var MerchantNote: String?
    }

    /// `DirectPaymentConfirm`.
    struct ConfirmRequest: Decodable, Sendable {
        var OtpValue: String?
        var OtpReference: String?
        var STCPayPmtReference: String?
        var TokenReference: String?
        var TokenizeYn: Bool?
    }

    /// `PaymentInquiry`.
    struct InquiryRequest: Decodable, Sendable {
        var RefNum: String?
    }

    /// The refund operation (its name is unofficial, see ``STCPaySimulator``).
    struct RefundRequest: Decodable, Sendable {
        var STCPayRefNum: String?
        var Amount: Decimal?
        /// The merchant's reference of this refund: a retry with the same one moves nothing again.
        var RefNum: String?
    }

    /// An answer STC Pay refuses with: HTTP status, `Code` and `Text`.
    struct Refusal: Error {
        var status: HTTPResponse.Status = .badRequest
        var code: Int
        var text: String

        static func badFormat(_ text: String) -> Refusal { Refusal(code: 2001, text: text) }
        static let alreadyPaid = Refusal(code: 2009, text: "Payment is already paid")
        static let insufficientFunds = Refusal(code: 2023, text: "Insufficient balance in the customer's STC Pay wallet")
        static let expired = Refusal(code: 2026, text: "Payment request has expired")
        static let cancelled = Refusal(code: 2027, text: "Payment request was cancelled by the customer")
        static let otpInvalid = Refusal(code: 2031, text: "Invalid or expired OTP")
        static func otpMismatch(attemptsLeft: Int) -> Refusal {
            Refusal(code: 2037, text: "OTP does not match; \(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left")
        }
        /// Not one of STC Pay's published codes: the simulator's choice for a
        /// request without the sandbox merchant's `X-ClientCode`.
        static let unauthorized = Refusal(status: .unauthorized, code: 1001, text: "Invalid or missing X-ClientCode")

        var response: Response { STCPayWire.response(status, ["Code": code, "Text": text]) }
    }

    /// The inner message of `{"<op>V4RequestMessage": {…}}`; anything else is 2001.
    static func decode<T: Decodable>(_ type: T.Type, operation: String, _ request: Request) async throws(Refusal) -> T {
        guard let buffer = try? await request.body.collect(upTo: 64 * 1024) else { throw .badFormat("request body is too large or unreadable") }
        let data = Data(buffer: buffer)
        let wrapper = operation + "V4RequestMessage"
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw .badFormat("request body is not a JSON object")
        }
        guard object[wrapper] is [String: Any] else { throw .badFormat("request body must be {\"\(wrapper)\": {…}}") }
        do {
            return try JSONDecoder().decode(STCPayRequestEnvelope<T>.self, from: data).message
        } catch {
            throw .badFormat("\(wrapper) has a member of the wrong type")
        }
    }

    /// `{"<op>V4ResponseMessage": message}` with HTTP 200.
    static func answer(_ operation: String, _ message: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(STCPayResponseEnvelope(name: operation + "V4ResponseMessage", message: message))) ?? Data("{}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Halalas from an `Amount`: positive, at most two decimals.
    static func halalas(_ amount: Decimal?, field: String = "Amount") throws(Refusal) -> Int64 {
        guard let amount else { throw .badFormat("\(field) is required") }
        guard let money = try? Money(decimal: "\(amount)", currency: "SAR"), money.value > 0 else {
            throw .badFormat("\(field) must be a positive SAR amount with at most 2 decimals")
        }
        return money.value
    }

    /// Halalas as the JSON number STC Pay writes (`150.5`).
    static func amount(_ halalas: Int64) -> Decimal {
        Decimal(string: (try? Money(value: halalas, currency: "SAR").decimalString()) ?? "0") ?? 0
    }

    static func response(_ status: HTTPResponse.Status, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, SimulatorJSON.text(document), contentType: "application/json; charset=utf-8")
    }

    /// `2026-11-22T21:40:05` in UTC, as STC Pay writes dates.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: date)
    }
}

extension STCPayWire {
    static let clientCodeHeader = HTTPField.Name("X-ClientCode")!

    /// Refuses a request without the sandbox merchant's `X-ClientCode`.
    static func checkClient(_ request: Request) throws(Refusal) {
        guard request.headers[STCPayWire.clientCodeHeader] == STCPaySimulator.merchantId else { throw .unauthorized }
    }
}

/// A member name as a coding key.
private struct STCPayKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// `{"<Op>V4RequestMessage": message}`, read.
private struct STCPayRequestEnvelope<T: Decodable>: Decodable {
    var message: T
    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: STCPayKey.self)
        guard let key = container.allKeys.first(where: { $0.stringValue.hasSuffix("V4RequestMessage") }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no request message"))
        }
        message = try container.decode(T.self, forKey: key)
    }
}

/// `{"<Op>V4ResponseMessage": message}`, written.
private struct STCPayResponseEnvelope<M: Encodable>: Encodable {
    var name: String
    var message: M
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: STCPayKey.self)
        try container.encode(message, forKey: STCPayKey(stringValue: name))
    }
}
