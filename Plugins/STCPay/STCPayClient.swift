import Foundation
import GatewayAdapterSDK

/// One STC Pay answer: the HTTP status and the body.
typealias STCPayAnswer = ProviderResponse

extension ProviderResponse {
    /// The inner `<Op>V4ResponseMessage`, or nil.
    func message<T: Decodable>(_ operation: String, _ type: T.Type) -> T? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              object[operation + "V4ResponseMessage"] is [String: Any] else { return nil }
        return try? JSONDecoder().decode(STCPayResponseEnvelope<T>.self, from: body).message
    }

    /// STC Pay's error code, when the body is `{"Code", "Text"}`.
    var failure: STCPayWire.Failure? { try? JSONDecoder().decode(STCPayWire.Failure.self, from: body) }

    /// `HTTP 400 2031: Invalid or expired OTP`, for messages.
    var summary: String {
        if let failure, let code = failure.Code { return "HTTP \(status) \(code): \((failure.Text ?? "").prefix(200))" }
        return "HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
    }
}

/// STC Pay's DirectPayment V4 through the host's egress: `POST
/// <base_url>/<Op>` with `X-ClientCode`, bodies wrapped as
/// `{"<Op>V4RequestMessage": …}`. The client certificate is the host's
/// business (the manifest's `tls`).
struct STCPayClient: Sendable {
    let http: ProviderHTTPClient

    /// The client of `base_url` and `request_timeout_ms`, sending `merchantId` as `X-ClientCode`.
    init(host: AdapterHost, configuration: AdapterConfiguration, merchantId: String) throws {
        var http = try ProviderHTTPClient(host: host, provider: "STC Pay", configuration: configuration,
                                          example: "https://<host>/B2B.DirectPayment.WebApi/DirectPayment/V4", authorization: .none)
        http.headers["X-ClientCode"] = merchantId
        self.http = http
    }

    /// Sends `message` to `operation`. An `HTTPEgressError` (no answer) is the caller's to classify.
    func send(_ operation: String, _ message: some Encodable & Sendable) async throws -> STCPayAnswer {
        try await http.send("POST", "/" + operation, .json(STCPayRequestEnvelope(name: operation + "V4RequestMessage", message: message)))
    }

    /// `PaymentInquiry` for `refNum`: its transactions (empty when STC Pay
    /// knows none). A lost or unusable answer leaves the outcome unknown.
    func inquiry(_ refNum: String) async throws -> [STCPayWire.Transaction] {
        let answer: STCPayAnswer
        do {
            answer = try await send("PaymentInquiry", STCPayWire.InquiryRequest(RefNum: refNum))
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("STC Pay's PaymentInquiry got no answer: \(error.message)")
        }
        guard answer.ok, let message = answer.message("PaymentInquiry", STCPayWire.InquiryAnswer.self) else {
            throw AdapterError.outcomeUnknown("STC Pay could not report RefNum \(refNum.prefix(64)): \(answer.summary)")
        }
        return message.TransactionList ?? []
    }
}

/// A member name as a coding key.
struct STCPayKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// `{"<Op>V4RequestMessage": message}`, written.
struct STCPayRequestEnvelope<M: Encodable & Sendable>: Encodable, Sendable {
    var name: String
    var message: M
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: STCPayKey.self)
        try container.encode(message, forKey: STCPayKey(stringValue: name))
    }
}

/// `{"<Op>V4ResponseMessage": message}`, read.
struct STCPayResponseEnvelope<T: Decodable>: Decodable {
    var message: T
    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: STCPayKey.self)
        guard let key = container.allKeys.first(where: { $0.stringValue.hasSuffix("V4ResponseMessage") }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no response message"))
        }
        message = try container.decode(T.self, forKey: key)
    }
}
