import Foundation
import GatewayAdapterSDK

/// One Tamara answer (snake_case JSON): the status and the body.
typealias TamaraAnswer = ProviderResponse

extension ProviderResponse {
    /// Tamara's error document, `{"message": …, "errors": [{"error_code": …}]}`.
    struct TamaraErrorDocument: Decodable {
        struct Entry: Decodable { var errorCode: String? }
        var message: String?
        var errors: [Entry]?
    }

    /// The first `error_code`, if the body is Tamara's error document.
    var errorCode: String? { decode(TamaraErrorDocument.self)?.errors?.compactMap(\.errorCode).first }

    /// `HTTP 400 order_status_not_allowed_to_capture: <message>`, for messages.
    var summary: String {
        let document = decode(TamaraErrorDocument.self)
        let codes = document?.errors?.compactMap(\.errorCode).joined(separator: ", ") ?? ""
        let message = document?.message ?? String(decoding: body.prefix(200), as: UTF8.self)
        return "HTTP \(status)" + (codes.isEmpty ? "" : " \(codes)") + (message.isEmpty ? "" : ": \(message.prefix(200))")
    }
}
