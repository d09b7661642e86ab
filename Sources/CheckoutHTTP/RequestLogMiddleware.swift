import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PluginHost

/// One log line per request, with its request id on it and on every line the
/// handlers log; the id goes back in `X-Request-Id`. The path is logged with
/// card numbers masked, and no body is ever logged. Metrics count by route
/// pattern (`/v1/sessions/{id}`), not raw path, so ids never become labels.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    static let requestIDHeader = HTTPField.Name("X-Request-Id")!

    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let given = request.headers[Self.requestIDHeader], Self.isUsable(given) {
            context.requestID = given
        }
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        let started = ContinuousClock.now
        var response = try await next(request, context)
        let route = context.endpointPath.map(Self.pattern) ?? "unmatched"
        let elapsed = ContinuousClock.now - started
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: elapsed)
        response.headers[Self.requestIDHeader] = context.requestID
        context.logger.info("\(request.method) \(Redaction.maskingCardNumbers(in: request.uri.path)) \(response.status.code) in \(elapsed)")
        return response
    }

    /// Hummingbird's `/v1/sessions/:id` as `/v1/sessions/{id}`.
    static func pattern(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
    }

    static func isUsable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
