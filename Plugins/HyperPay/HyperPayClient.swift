import Foundation
import GatewayAdapterSDK

/// One OPPWA answer: the HTTP status, the `result` and the rest of the JSON.
struct HyperPayAnswer: Sendable {
    var status: Int
    var body: JSONValue
    var code: String? { body["result"]?["code"]?.stringValue }
    var resultDescription: String { body["result"]?["description"]?.stringValue ?? "" }
    subscript(key: String) -> String? { body[key]?.stringValue }

    /// `name: message` of each `result.parameterErrors` entry.
    var parameterErrors: String {
        guard case .array(let errors)? = body["result"]?["parameterErrors"] else { return "" }
        return errors.compactMap { error in
            error["name"]?.stringValue.map { "\($0): \(error["message"]?.stringValue ?? "invalid")" }
        }.joined(separator: "; ")
    }

    /// The code, description and parameter errors, for messages.
    var summary: String {
        let errors = parameterErrors
        return "\(code ?? "HTTP \(status)") \(resultDescription)" + (errors.isEmpty ? "" : " (\(errors))")
    }
}

/// Sends form-encoded requests with the Bearer token, through the host.
struct HyperPayClient: Sendable {
    let host: AdapterHost
    let baseURL: String
    let timeoutMilliseconds: Int

    /// `method path` with `form` as the body (POST) or the query (GET).
    /// Throws the host's `HTTPEgressError` when no answer came back, and
    /// ``AdapterError/internal(_:)`` before sending when no token is configured.
    func send(_ method: String, _ path: String, _ form: [(String, String)]) async throws -> HyperPayAnswer {
        guard var token = host.secret("access_token"), !token.isEmpty else {
            throw AdapterError.internal("the access_token secret is not configured, so nothing was sent to HyperPay")
        }
        defer { for i in token.indices { token[i] = 0 } }
        let encoded = Self.encode(form)
        var headers = ["Authorization": "Bearer " + String(decoding: token, as: UTF8.self), "Accept": "application/json"]
        var url = baseURL + path
        var body: Data?
        if method == "GET" {
            if !encoded.isEmpty { url += "?" + encoded }
        } else {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(encoded.utf8)
        }
        let response = try await host.send(HTTPRequest(method: method, url: url, headers: headers, body: body, timeoutMilliseconds: timeoutMilliseconds))
        let json = (try? JSONDecoder().decode(JSONValue.self, from: response.bodyData)) ?? .null
        return HyperPayAnswer(status: response.status, body: json)
    }

    /// `a=1&b=x%20y`, each name and value percent-encoded.
    static func encode(_ form: [(String, String)]) -> String {
        form.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A path segment (checkout and payment ids), percent-encoded.
    static func segment(_ text: String) -> String { escape(text) }
}
