import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import PaymentGateway

/// Every `/v1` route but the providers' webhooks needs an API key
/// (``APIKeys``); the key's record goes on the request context, whose mode
/// every handler passes to the engine.
///
/// Which routes need a key is decided by the route that matched (its
/// pattern, `/v1/sessions/:id`), not by the raw path, so no spelling of a
/// path (`//v1/sessions`) can reach a handler without one. A handler asks for
/// the caller's mode with ``GatewayRequestContext/callerMode()``, which fails
/// closed. A path that matches no route is the router's 404, key or not.
///
/// Webhooks carry no key: the adapter's verification of the provider's
/// signature is their only way in.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let keys: APIKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let route = context.endpointPath, Self.needsKey(route: route) else {
            return try await next(request, context)
        }
        guard let token = request.headers[.authorization].flatMap(Self.bearerToken) else {
            return Unauthorized.response(detail: "the API needs Authorization: Bearer <key> (a gk_test_… or gk_live_… key; see gateway keys)",
                                         realm: "gateway", tokenGiven: false)
        }
        switch try await keys.verify(token) {
        case .admitted(let key):
            var context = context
            context.apiKey = key
            return try await next(request, context)
        case .refused(let detail):
            return Unauthorized.response(detail: detail, realm: "gateway", tokenGiven: true)
        }
    }

    /// The token of a `Bearer` credential (the scheme in any case, then one or
    /// more spaces), or nil when there is none (no header, another scheme,
    /// nothing after `Bearer`).
    static func bearerToken(_ field: String) -> String? {
        let bytes = Array(field.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }),
              bytes[scheme.count] == UInt8(ascii: " ") else { return nil }
        let token = bytes.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let trimmed = token.reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.reversed()
        return trimmed.isEmpty ? nil : String(decoding: trimmed, as: UTF8.self)
    }

    /// Whether a route (Hummingbird's pattern) needs an API key: all of
    /// `/v1` but `/v1/webhooks/…`.
    static func needsKey(route: String) -> Bool {
        (route == "/v1" || route.hasPrefix("/v1/")) && !route.hasPrefix("/v1/webhooks/")
    }
}

/// A `401`: an `unauthorized` problem with the challenge RFC 9110 requires
/// (`WWW-Authenticate: Bearer realm="…"`, with `error="invalid_token"` when
/// a token was given, as RFC 6750 says).
enum Unauthorized {
    static func response(detail: String, realm: String, tokenGiven: Bool) -> Response {
        var response = ProblemError.response(for: ProblemCatalog.problem(code: .unauthorized, detail: detail))
        response.headers[.wwwAuthenticate] = challenge(realm: realm, tokenGiven: tokenGiven)
        return response
    }

    static func challenge(realm: String, tokenGiven: Bool) -> String {
        tokenGiven ? #"Bearer realm="\#(realm)", error="invalid_token""# : #"Bearer realm="\#(realm)""#
    }
}

extension GatewayRequestContext {
    /// The mode of the caller's API key. A `/v1` handler reached without a
    /// checked key (a route outside ``APIKeyMiddleware``: a bug) is refused
    /// as unauthorised, never served in some mode.
    func callerMode() throws -> PaymentMode {
        guard let apiKey else {
            throw ProblemError(code: .unauthorized, detail: "the API needs Authorization: Bearer <key>")
        }
        return apiKey.mode
    }
}
