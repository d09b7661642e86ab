import CheckoutEngine
import Foundation
import GatewayPayloads
import PaymentFields
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PaymentGateway

/// The checkout API over HTTP: what a merchant's backend and ops talk to.
///
/// Shape (each part in its own file):
/// - ``CheckoutAPI``: the router. `/v1` (sessions, attempts, payments,
///   webhooks, providers, events), `/admin` (only with a token), operations
///   (`/healthz`, `/readyz`, `/metrics`, `/openapi.json`).
/// - ``JSONBody``: strict request bodies (size cap, media type, unknown
///   members, types), every refusal a 4xx naming the member.
/// - ``ProblemMiddleware``: every error is `application/problem+json` with
///   the engine's problem fields; no error escapes as anything else.
/// - ``RequestLogMiddleware``: a request id on every line and the
///   `X-Request-Id` header; metrics by route pattern; nothing of a body logged.
/// - ``EventStream``: server-sent events of a session, replayed then live.
/// - ``AdminAccess``: the bearer token, compared in constant time.
/// - ``APIKeys`` and ``APIKeyMiddleware``: every `/v1` route but webhooks
///   needs an API key; its mode is the only mode the caller sees.
/// - ``GatewayMetrics``: swift-metrics on a Prometheus registry of its own.
///
/// JSON out is written by the engine's own codecs (the same documents the
/// store keeps); money is always integer minor units with its currency.
/// Hummingbird's router (the engine has a `Router` of its own: routing payments).
public typealias APIRouter = Hummingbird.Router<GatewayRequestContext>

public struct CheckoutAPI: Sendable {
    public let gateway: PaymentGateway
    public let metrics: GatewayMetrics
    public let admin: AdminAccess?
    public let keys: APIKeys
    /// The requests this API's routers are answering now.
    public let inFlight = RequestsInFlight()
    let logger: Logger

    public init(gateway: PaymentGateway, metrics: GatewayMetrics, admin: AdminAccess?, logger: Logger) {
        self.gateway = gateway
        self.metrics = metrics
        self.admin = admin
        self.keys = gateway.keys
        self.logger = logger
    }

    /// Every route; without `webhooks`, all but the providers' webhooks
    /// (served by ``webhookRouter()`` on a listener of their own).
    public func router(webhooks: Bool = true) -> APIRouter {
        let router = APIRouter(context: GatewayRequestContext.self)
        let routes = RouteMethods()
        router.add(middleware: RequestLogMiddleware(metrics: metrics, inFlight: inFlight))
        router.add(middleware: ProblemMiddleware(routes: routes))
        router.add(middleware: APIKeyMiddleware(keys: keys))
        addSessionRoutes(to: router)
        addPaymentRoutes(to: router)
        addEndpointRoutes(to: router)
        if webhooks { addWebhookRoutes(to: router) }
        addOperationRoutes(to: router)
        if let admin { addAdminRoutes(to: router, access: admin) }
        routes.record(router.routes)
        return router
    }

    /// The providers' webhooks and nothing else: what a listener reachable
    /// from the internet serves while the payment API stays private.
    public func webhookRouter() -> APIRouter {
        let router = APIRouter(context: GatewayRequestContext.self)
        let routes = RouteMethods()
        router.add(middleware: RequestLogMiddleware(metrics: metrics, inFlight: inFlight))
        router.add(middleware: ProblemMiddleware(routes: routes))
        addWebhookRoutes(to: router)
        routes.record(router.routes)
        return router
    }

    // MARK: Shared helpers

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ value: some JSONPayload, status: HTTPResponse.Status = .ok) -> Response {
        json(value.jsonBytes(), status: status)
    }

    /// A session as the API shows it: the session's own document (without
    /// the instruments it keeps) with its `availableMethods` and, per method,
    /// the `instruments` that may be used now and the `fields` of its form
    /// added as members.
    static func sessionJSON(_ snapshot: SessionSnapshot) -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        snapshot.session.writeMembers(to: &w, instruments: false)
        w.key("availableMethods")
        w.beginArray()
        for method in snapshot.availableMethods { w.string(method) }
        w.endArray()
        w.key("instruments")
        w.beginObject()
        for method in snapshot.instruments.keys.sorted() {
            w.key(method)
            w.beginArray()
            for offered in snapshot.instruments[method] ?? [] { writeInstrument(offered, to: &w) }
            w.endArray()
        }
        w.endObject()
        w.key("fields")
        Field.write(forms: snapshot.fields, encoded: snapshot.forms, to: &w)
        w.endObject()
        return w.bytes
    }

    /// One instrument as the API shows it: its id (for the kinds a payer
    /// picks), kind and provider, then its kind's display members.
    static func writeInstrument(_ offered: OfferedInstrument, to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", offered.id)
        w.member("kind", offered.instrument.kind)
        w.member("provider", offered.provider)
        offered.instrument.writeDisplayMembers(to: &w)
        w.endObject()
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// The request's `Idempotency-Key`: 1 to 255 visible ASCII characters
    /// (`!` to `~`), as the OpenAPI document declares; anything else (empty,
    /// too long, spaces, control or non-ASCII bytes) is a `400`, so that no
    /// key is ever compared or stored in a form the caller did not send.
    static func idempotencyKey(_ request: Request) throws -> String? {
        let values = request.headers[values: idempotencyKey]
        guard let key = values.first else { return nil }
        guard values.count == 1 else {
            throw ProblemError(code: .malformedRequest, detail: "Idempotency-Key is given \(values.count) times; send it once")
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ProblemError(code: .malformedRequest, detail: "Idempotency-Key must be 1 to 255 visible ASCII characters (! to ~)")
        }
        return key
    }
}
