import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird

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
        switch try await keys.verify(request.headers[.authorization]) {
        case .admitted(let key):
            var context = context
            context.apiKey = key
            return try await next(request, context)
        case .missing(let detail):
            return Unauthorized.response(detail: detail, realm: "gateway", tokenGiven: false)
        case .refused(let detail):
            return Unauthorized.response(detail: detail, realm: "gateway", tokenGiven: true)
        }
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
