import Foundation

/// A provider's HTTP API through the host's egress (`http_send`: the host
/// holds the allowlist, TLS and pinning): one base URL, one way to
/// authorize, one timeout (`request_timeout_ms`). What every shipped
/// adapter's client was, written once: an adapter keeps only its wire
/// format, its status mapping and its flow.
///
/// - Authorization reads the named secrets for each request and wipes them
///   when it is sent: ``Authorization/bearer(secret:)``, or
///   ``Authorization/signed(secrets:sign:)`` for a provider that signs
///   requests (Worldline's `GCS v1HMAC`). A missing or empty secret fails
///   before anything is sent (``SecretUnavailable``, `GW_E_NOT_FOUND`, which
///   proves nothing was).
/// - A path is appended to the base URL; an absolute URL (a link the
///   provider gave: Swedbank Pay's operations) is followed only on the base
///   URL's scheme, host and port, so a credential never goes elsewhere.
/// - ``send(_:_:_:headers:)`` throws the host's ``HTTPEgressError`` when no
///   answer came back: whether that may hide an effect is the adapter's to
///   say (a create whose answer was lost is unknown; a read is not), or
///   ``exchange(_:_:_:headers:what:)`` says it is unknown. Before sending it
///   throws ``SecretUnavailable`` for a missing secret,
///   ``AdapterError/invalidRequest(_:)`` for a link on another origin, and
///   the encoder's error for a body that cannot be JSON.
public struct ProviderHTTPClient: Sendable {
    /// How each request is authorized.
    public enum Authorization: Sendable {
        /// Nothing from the adapter (mutual TLS is the host's, from the manifest's `tls`).
        case none
        /// `Authorization: Bearer <value of the secret>`.
        case bearer(secret: String)
        /// Signs each request with the values of the named secrets, in order
        /// (headers added to the request; the host's clock for a date).
        case signed(secrets: [String], sign: @Sendable (_ request: inout ProviderRequest, _ secrets: [[UInt8]], _ host: AdapterHost) throws -> Void)
    }

    /// How JSON members are named on the wire.
    public enum JSONKeys: Sendable {
        /// As the Swift properties are (`merchantReference`).
        case asIs
        /// snake_case (`merchant_reference`), both ways.
        case snakeCase
    }

    /// A request's body.
    public enum Body: Sendable {
        case none
        /// A JSON value, written by the gateway's one writer (members sorted by key).
        case value(JSONValue)
        /// The adapter's own Codable type for a provider's document, encoded
        /// with sorted keys and unescaped slashes, in ``jsonKeys``. (Foundation's
        /// encoder stays here: a provider's schema is the adapter author's, in
        /// Codable types; none of the gateway's own documents passes here.)
        case json(any Encodable & Sendable)
        /// `application/x-www-form-urlencoded`; on a GET, the query instead.
        case form([(String, String)])
        /// Bytes as they are (a request encoded before: a replayed create).
        case raw(Data, contentType: String)
    }

    /// A request as it is about to be sent: what a signer sees and adds to.
    public struct ProviderRequest: Sendable {
        public var method: String
        public var url: String
        public var headers: [String: String]
        public var body: Data?
        /// The body's content type (nil without a body).
        public var contentType: String? { headers["Content-Type"] }
    }

    public let host: AdapterHost
    /// The provider's name, for messages (`Tamara`).
    public let provider: String
    /// No trailing `/`.
    public let baseURL: String
    public let timeoutMilliseconds: Int
    public let authorization: Authorization
    /// Sent with every request (an adapter's own: `Accept`, a client code).
    public var headers: [String: String] = ["Accept": "application/json"]
    /// The `Content-Type` of a JSON body (Swedbank Pay names a version in it).
    public var jsonContentType = "application/json"
    public var jsonKeys: JSONKeys = .asIs

    public init(host: AdapterHost, provider: String, baseURL: String, timeoutMilliseconds: Int, authorization: Authorization) {
        self.host = host
        self.provider = provider
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeoutMilliseconds = timeoutMilliseconds
        self.authorization = authorization
    }

    /// The client of `configuration`'s `base_url` (``AdapterConfiguration/providerURL(_:provider:example:)``)
    /// and `request_timeout_ms` (``AdapterConfiguration/requestTimeoutMilliseconds(default:)``).
    public init(host: AdapterHost, provider: String, configuration: AdapterConfiguration, baseURLKey: String = "base_url", example: String,
                authorization: Authorization) throws {
        let base = try configuration.providerURL(baseURLKey, provider: provider, example: example)
        self.init(host: host, provider: provider, baseURL: base, timeoutMilliseconds: try configuration.requestTimeoutMilliseconds(),
                  authorization: authorization)
    }

    /// Sends `method` to `path` (on the base URL, or an absolute URL on its
    /// origin) with `body` and `headers` beside the client's own.
    public func send(_ method: String, _ path: String, _ body: Body = .none, headers extra: [String: String] = [:]) async throws -> ProviderResponse {
        var url = try target(path)
        var request = ProviderRequest(method: method, url: url, headers: headers.merging(extra) { $1 }, body: nil)
        switch body {
        case .none:
            break
        case .value(let value):
            request.body = Data(value.jsonBytes())
            request.headers["Content-Type"] = jsonContentType
        case .json(let value):
            request.body = try encoded(value)
            request.headers["Content-Type"] = jsonContentType
        case .form(let fields):
            let text = Self.formEncoded(fields)
            if method == "GET" {
                if !text.isEmpty { url += (url.contains("?") ? "&" : "?") + text }
                request.url = url
            } else {
                request.body = Data(text.utf8)
                request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            }
        case .raw(let data, let contentType):
            request.body = data
            request.headers["Content-Type"] = contentType
        }
        try authorize(&request)
        let response = try await host.send(HTTPRequest(method: request.method, url: request.url, headers: request.headers, body: request.body,
                                                       timeoutMilliseconds: timeoutMilliseconds))
        return ProviderResponse(status: response.status, headers: response.headers, body: response.bodyData, jsonKeys: jsonKeys)
    }

    /// ``send(_:_:_:headers:)`` for a request whose answer, lost, leaves
    /// the outcome unknown (it may have acted, or be read that way): no
    /// answer (``HTTPEgressError``) becomes ``AdapterError/outcomeUnknown(_:)``
    /// saying "<provider>'s <what> got no answer".
    public func exchange(_ method: String, _ path: String, _ body: Body = .none, headers extra: [String: String] = [:],
                         what: String) async throws -> ProviderResponse {
        do {
            return try await send(method, path, body, headers: extra)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("\(provider)'s \(what) got no answer: \(error.message)")
        }
    }

    /// The URL of `path`: a path (starting with `/`) appended to the base
    /// URL, or an absolute URL as it is; either way only on the base URL's
    /// scheme, host and port, with no user part (`https://api.example@evil`),
    /// so a credential never goes elsewhere.
    public func target(_ path: String) throws -> String {
        let absolute = path.hasPrefix("http://") || path.hasPrefix("https://")
        guard absolute || path.hasPrefix("/") else {
            throw AdapterError.invalidRequest("\(provider): \(path.prefix(80)) is neither a path from the base URL (/…) nor an absolute URL; it was not sent")
        }
        let url = absolute ? path : baseURL + path
        guard let target = URL(string: url), let base = URL(string: baseURL), target.user == nil, target.password == nil,
              target.scheme == base.scheme, target.host == base.host, target.port == base.port else {
            throw AdapterError.invalidRequest("\(provider) gave a link on another origin than its base URL (\(URL(string: url)?.host ?? "unreadable")); it was not followed")
        }
        return url
    }

    /// `value` as JSON the way this client sends it.
    public func encoded(_ value: any Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if jsonKeys == .snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        return try encoder.encode(value)
    }

    private func authorize(_ request: inout ProviderRequest) throws {
        switch authorization {
        case .none:
            return
        case .bearer(let name):
            let header: String? = host.withSecret(name) { "Bearer " + String(decoding: $0, as: UTF8.self) }
            guard let header else { throw missing([name]) }
            request.headers["Authorization"] = header
        case .signed(let names, let sign):
            var values: [[UInt8]] = []
            defer { for index in values.indices { values[index].withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } } }
            for name in names {
                guard let value = host.secret(name), !value.isEmpty else { throw missing(names) }
                values.append(value)
            }
            try sign(&request, values, host)
        }
    }

    private func missing(_ names: [String]) -> SecretUnavailable {
        SecretUnavailable(names: names, message: "the \(names.joined(separator: " and ")) secret\(names.count == 1 ? " has" : "s have") no value, so nothing was sent to \(provider)")
    }

    /// `a=1&b=x%20y`, each name and value percent-encoded.
    public static func formEncoded(_ fields: [(String, String)]) -> String {
        fields.map { pathSegment($0.0) + "=" + pathSegment($0.1) }.joined(separator: "&")
    }

    /// `text` percent-encoded as one path segment (or a form name or value):
    /// only letters, digits and `-._~` stay as they are.
    public static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// RFC 3986's unreserved characters, ASCII only (`CharacterSet.alphanumerics`
    /// would leave every Unicode letter unencoded).
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// A provider's answer: its status, headers and body.
public struct ProviderResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// How the client that got it names JSON members.
    public var jsonKeys: ProviderHTTPClient.JSONKeys

    public init(status: Int, headers: [String: String] = [:], body: Data, jsonKeys: ProviderHTTPClient.JSONKeys = .asIs) {
        self.status = status
        self.headers = headers
        self.body = body
        self.jsonKeys = jsonKeys
    }

    /// A 2xx.
    public var ok: Bool { (200..<300).contains(status) }

    /// The body as `T`, or nil when it is not.
    public func decode<T: Decodable>(_ type: T.Type) -> T? {
        let decoder = JSONDecoder()
        if jsonKeys == .snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        return try? decoder.decode(T.self, from: body)
    }

    /// The body as a JSON value (`.null` when it is not JSON).
    public var json: JSONValue { (try? JSONValue(jsonData: body)) ?? .null }
}
