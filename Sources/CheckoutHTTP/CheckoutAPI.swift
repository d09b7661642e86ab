import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PaymentGateway
import PluginHost

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
    let logger: Logger

    public init(gateway: PaymentGateway, metrics: GatewayMetrics, admin: AdminAccess?, logger: Logger) {
        self.gateway = gateway
        self.metrics = metrics
        self.admin = admin
        self.logger = logger
    }

    public func router() -> APIRouter {
        let router = APIRouter(context: GatewayRequestContext.self)
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: ProblemMiddleware())
        addSessionRoutes(to: router)
        addPaymentRoutes(to: router)
        addOperationRoutes(to: router)
        if let admin { addAdminRoutes(to: router, access: admin) }
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

    /// A session as the API shows it: the session's own document with its
    /// `availableMethods` added as a member.
    static func sessionJSON(_ snapshot: SessionSnapshot) -> [UInt8] {
        var bytes = snapshot.session.jsonBytes()
        // The document is an object: its last byte is the closing brace.
        guard bytes.last == UInt8(ascii: "}") else { return snapshot.jsonBytes() }
        bytes.removeLast()
        var writer = JSONWriter()
        writer.beginArray()
        for method in snapshot.availableMethods { writer.string(method) }
        writer.endArray()
        bytes.append(contentsOf: Array(#","availableMethods":"#.utf8))
        bytes.append(contentsOf: writer.bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    static func idempotencyKey(_ request: Request) -> String? {
        request.headers[idempotencyKey]
    }
}
