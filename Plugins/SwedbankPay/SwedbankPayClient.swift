import Foundation
import GatewayAdapterSDK

/// One Swedbank Pay answer: the HTTP status and the body.
struct SwedbankPayAnswer: Sendable {
    var status: Int
    var body: Data

    var ok: Bool { (200..<300).contains(status) }

    func decode<T: Decodable>(_ type: T.Type) -> T? { try? JSONDecoder().decode(T.self, from: body) }

    /// The RFC 7807 problem of a refusal, if the body is one.
    var problem: SwedbankPayWire.Problem? {
        guard !ok, let problem = decode(SwedbankPayWire.Problem.self), problem.type != nil else { return nil }
        return problem
    }

    /// `HTTP 400 inputerror: <detail> (<name>: <description>)`, for messages.
    var summary: String {
        // Only a problem's own fields are quoted: another body may carry tokens (a session's prefills).
        guard let problem = decode(SwedbankPayWire.Problem.self), problem.type != nil else { return "HTTP \(status)" }
        let items = (problem.problems ?? []).compactMap { item in item.name.map { "\($0): \(item.description ?? "")" } }
        return "HTTP \(status) \(problem.name): \(problem.detail ?? problem.title ?? "")" + (items.isEmpty ? "" : " (" + items.joined(separator: "; ") + ")")
    }
}

/// Swedbank Pay's API through the host's egress: `Authorization: Bearer
/// <access_token>`, `Content-Type: application/json;version=3.1`. Only the
/// create is sent to a URL the adapter builds; every later call follows an
/// `href` the provider gave, and an `href` on another origin than
/// `base_url` is never followed (it would carry the access token elsewhere).
struct SwedbankPayClient: Sendable {
    let host: AdapterHost
    let baseURL: String
    let timeoutMilliseconds: Int

    static let contentType = "application/json;version=3.1"

    /// `POST /psp/paymentorders`.
    func create(_ body: SwedbankPayWire.Create) async throws -> SwedbankPayAnswer {
        try await send("POST", baseURL + "/psp/paymentorders", body)
    }

    /// Follows `operation` (its `href` and `method`) with `body`.
    func follow(_ operation: SwedbankPayWire.Operation, _ body: (any Encodable & Sendable)? = nil, query: String? = nil) async throws -> SwedbankPayAnswer {
        guard let href = operation.href else { throw AdapterError.outcomeUnknown("Swedbank Pay offered \(operation.rel ?? "an operation") without an href") }
        return try await send(operation.method ?? "GET", href + (query.map { (href.contains("?") ? "&" : "?") + $0 } ?? ""), body)
    }

    /// GETs an order (its id, `/psp/paymentorders/<uuid>`) with `$expand`.
    func order(_ id: String, expand: String = "paid,financialtransactions,failedattempts") async throws -> SwedbankPayAnswer {
        try await send("GET", absolute(id) + "?$expand=" + expand, nil)
    }

    /// `path` (an id such as `/psp/paymentorders/…`) on `base_url`'s origin,
    /// or an absolute href as it is.
    func absolute(_ path: String) -> String {
        if path.hasPrefix("http://") || path.hasPrefix("https://") { return path }
        guard let base = URL(string: baseURL), let scheme = base.scheme, let host = base.host else { return baseURL + path }
        // The API's ids are paths from the API's root: `base_url` may carry a prefix (the sandbox's `/swedbankpay`).
        let prefix = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
        return "\(scheme)://\(host)" + (base.port.map { ":\($0)" } ?? "") + (path.hasPrefix(prefix) ? "" : prefix) + path
    }

    /// Whether `url` is on `base_url`'s scheme, host and port.
    func isOwnOrigin(_ url: String) -> Bool {
        guard let target = URL(string: url), let base = URL(string: baseURL) else { return false }
        return target.scheme == base.scheme && target.host == base.host && target.port == base.port
    }

    func send(_ method: String, _ url: String, _ body: (any Encodable & Sendable)?) async throws -> SwedbankPayAnswer {
        guard isOwnOrigin(url) else {
            throw AdapterError.invalidRequest("Swedbank Pay offered an operation on another origin than config.base_url (\(URL(string: url)?.host ?? "unreadable")); it was not followed")
        }
        guard var token = host.secret("access_token"), !token.isEmpty else {
            throw AdapterError.internal("the access_token secret is not configured, so nothing was sent to Swedbank Pay")
        }
        defer { for i in token.indices { token[i] = 0 } }
        var headers = ["Authorization": "Bearer " + String(decoding: token, as: UTF8.self), "Accept": "application/problem+json; q=1.0, application/json; q=0.9"]
        var data: Data?
        if let body {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(body)
            headers["Content-Type"] = Self.contentType
        }
        let response = try await host.send(HTTPRequest(method: method, url: url, headers: headers, body: data, timeoutMilliseconds: timeoutMilliseconds))
        return SwedbankPayAnswer(status: response.status, body: response.bodyData)
    }
}
