import Foundation
import GatewayAdapterSDK

/// One Swedbank Pay answer: the HTTP status and the body.
typealias SwedbankPayAnswer = ProviderResponse

extension ProviderResponse {
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
    let http: ProviderHTTPClient
    var baseURL: String { http.baseURL }

    static let contentType = "application/json;version=3.1"

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        var http = try ProviderHTTPClient(host: host, provider: "Swedbank Pay", configuration: configuration, example: "https://api.payex.com",
                                          authorization: .bearer(secret: "access_token"))
        http.headers["Accept"] = "application/problem+json; q=1.0, application/json; q=0.9"
        http.jsonContentType = Self.contentType
        self.http = http
    }

    /// `POST /psp/paymentorders`.
    func create(_ body: SwedbankPayWire.Create) async throws -> SwedbankPayAnswer {
        try await send("POST", baseURL + "/psp/paymentorders", .json(body))
    }

    /// Follows `operation` (its `href` and `method`) with `body`.
    func follow(_ operation: SwedbankPayWire.Operation, _ body: JSONValue, query: String? = nil) async throws -> SwedbankPayAnswer {
        try await follow(operation, ProviderHTTPClient.Body.value(body), query: query)
    }

    /// Follows `operation` (its `href` and `method`) with `body`, one of the wire's Codable documents.
    func follow(_ operation: SwedbankPayWire.Operation, _ body: any Encodable & Sendable, query: String? = nil) async throws -> SwedbankPayAnswer {
        try await follow(operation, ProviderHTTPClient.Body.json(body), query: query)
    }

    /// Follows `operation` (its `href` and `method`) with `body`.
    func follow(_ operation: SwedbankPayWire.Operation, _ body: ProviderHTTPClient.Body = .none, query: String? = nil) async throws -> SwedbankPayAnswer {
        guard let href = operation.href else { throw AdapterError.outcomeUnknown("Swedbank Pay offered \(operation.rel ?? "an operation") without an href") }
        // Swedbank Pay's hrefs are absolute: anything else is not followed (the client checks the origin).
        guard href.hasPrefix("https://") || href.hasPrefix("http://") else {
            throw AdapterError.invalidRequest("Swedbank Pay offered \(operation.rel ?? "an operation") with an href that is not an absolute URL; it was not followed")
        }
        return try await send(operation.method ?? "GET", href + (query.map { (href.contains("?") ? "&" : "?") + $0 } ?? ""), body)
    }

    /// GETs an order (its id, `/psp/paymentorders/<uuid>`) with `$expand`.
    func order(_ id: String, expand: String = "paid,financialtransactions,failedattempts") async throws -> SwedbankPayAnswer {
        try await send("GET", absolute(id) + "?$expand=" + expand, .none)
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

    /// Sends `body` (nil: none) to `url`, an href on `base_url`'s origin
    /// (another is never followed: it would carry the access token elsewhere).
    func send(_ method: String, _ url: String, _ body: ProviderHTTPClient.Body) async throws -> SwedbankPayAnswer {
        try await http.send(method, url, body)
    }
}
