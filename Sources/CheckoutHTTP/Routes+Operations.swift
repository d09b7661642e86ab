import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

extension CheckoutAPI {
    /// Liveness, readiness, metrics and the API's contract.
    func addOperationRoutes(to router: APIRouter) {
        let gateway = self.gateway
        let metrics = self.metrics
        let admin = self.admin

        // Probes answer HEAD as GET, without the body (``ProblemMiddleware``
        // drops it): what a load balancer's health check often sends.
        let healthz: @Sendable (Request, GatewayRequestContext) async throws -> Response = { _, _ in
            Self.json(Array(#"{"status":"ok"}"#.utf8))
        }
        router.get("/healthz", use: healthz)
        router.head("/healthz", use: healthz)

        // Ready when the store answers a read and at least one enabled
        // provider's adapter is loaded.
        let readyz: @Sendable (Request, GatewayRequestContext) async throws -> Response = { _, context in
            switch await gateway.readiness() {
            case .ready(let providers):
                return Self.json(Array(#"{"status":"ready","providers":\#(providers)}"#.utf8))
            case .storeUnavailable(let error):
                // Anyone may ask: why is logged, not told.
                throw ProblemError(ProblemCatalog.storeUnavailable(error, logger: context.logger))
            case .noProviderLoaded:
                throw ProblemError(ProblemCatalog.problem(code: .internalError, detail: "no provider is loaded and enabled", retryable: true)
                    .withStatus(503))
            }
        }
        router.get("/readyz", use: readyz)
        router.head("/readyz", use: readyz)

        router.get("/metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition(gateway.providerReport()))))
        }

        // The document describes the routes this server serves: without an
        // admin token there is no /admin, and the document says none.
        let document = admin == nil ? OpenAPIDocument.withoutAdmin : OpenAPIDocument.bytes
        router.get("/openapi.json") { _, _ -> Response in
            Self.json(document)
        }
    }
}

extension Problem {
    func withStatus(_ status: Int) -> Problem {
        var problem = self
        problem.status = status
        return problem
    }
}

/// The checked-in OpenAPI 3.1 document (`Sources/CheckoutHTTP/openapi.json`).
enum OpenAPIDocument {
    static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let data = try? Data(contentsOf: url) else { return Array(#"{"openapi":"3.1.0"}"#.utf8) }
        return Array(data)
    }()

    /// The document less its `/admin` paths and the admin token's security
    /// scheme: what a server with no admin token configured serves.
    static let withoutAdmin: [UInt8] = {
        guard case .object(var document)? = bytes.withUnsafeBytes({ try? JSONValue(jsonBytes: $0) }),
              case .object(var paths)? = document["paths"] else { return bytes }
        for path in paths.keys where path == "/admin" || path.hasPrefix("/admin/") { paths[path] = nil }
        document["paths"] = .object(paths)
        if case .object(var components)? = document["components"], case .object(var schemes)? = components["securitySchemes"] {
            schemes["adminToken"] = nil
            components["securitySchemes"] = .object(schemes)
            document["components"] = .object(components)
        }
        return JSONValue.object(document).jsonBytes()
    }()
}
