import Foundation
import GatewayAdapterSDK

/// One Tamara answer: the HTTP status and the body.
struct TamaraAnswer: Sendable {
    var status: Int
    var body: Data

    var ok: Bool { (200..<300).contains(status) }

    /// The body as `T` (snake_case members), or nil.
    func decode<T: Decodable>(_ type: T.Type) -> T? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(T.self, from: body)
    }

    /// Tamara's error document, `{"message": …, "errors": [{"error_code": …}]}`.
    struct ErrorDocument: Decodable {
        struct Entry: Decodable { var errorCode: String? }
        var message: String?
        var errors: [Entry]?
    }

    /// The first `error_code`, if the body is Tamara's error document.
    var errorCode: String? { decode(ErrorDocument.self)?.errors?.compactMap(\.errorCode).first }

    /// `HTTP 400 order_status_not_allowed_to_capture: <message>`, for messages.
    var summary: String {
        let document = decode(ErrorDocument.self)
        let codes = document?.errors?.compactMap(\.errorCode).joined(separator: ", ") ?? ""
        let message = document?.message ?? String(decoding: body.prefix(200), as: UTF8.self)
        return "HTTP \(status)" + (codes.isEmpty ? "" : " \(codes)") + (message.isEmpty ? "" : ": \(message.prefix(200))")
    }
}

/// Tamara's API through the host's egress: JSON bodies with snake_case
/// members, `Authorization: Bearer <api_token>`.
struct TamaraClient: Sendable {
    let host: AdapterHost
    let baseURL: String
    let timeoutMilliseconds: Int

    /// Sends `body` (nil: no body) to `path`. An `HTTPEgressError` (no answer)
    /// is the caller's to classify.
    func send(_ method: String, _ path: String, _ body: (any Encodable & Sendable)? = nil) async throws -> TamaraAnswer {
        guard var token = host.secret("api_token"), !token.isEmpty else {
            throw AdapterError.internal("the api_token secret is not configured, so nothing was sent to Tamara")
        }
        defer { for i in token.indices { token[i] = 0 } }
        var headers = ["Authorization": "Bearer " + String(decoding: token, as: UTF8.self), "Accept": "application/json"]
        var data: Data?
        if let body {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(body)
            headers["Content-Type"] = "application/json"
        }
        let response = try await host.send(HTTPRequest(method: method, url: baseURL + path, headers: headers, body: data,
                                                       timeoutMilliseconds: timeoutMilliseconds))
        return TamaraAnswer(status: response.status, body: response.bodyData)
    }

    /// A path segment (Tamara ids), percent-encoded.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
