import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

/// Every error the API answers with is an RFC 9457 problem
/// (`application/problem+json`) carrying the engine's problem fields.
struct ProblemError: Error, HTTPResponseError {
    var problem: Problem

    init(_ problem: Problem) {
        self.problem = problem
    }

    init(code: String, detail: String) {
        problem = ProblemCatalog.problem(code: code, detail: detail)
    }

    var status: HTTPResponse.Status { HTTPResponse.Status(code: problem.status) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        ProblemError.response(for: problem)
    }

    static func response(for problem: Problem) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if problem.status == 405 { headers[.allow] = "GET, POST" }
        return Response(status: HTTPResponse.Status(code: problem.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: problem.jsonBytes())))
    }
}

/// Turns whatever a route throws into a problem response, so that no error
/// (a router 404, a body too large, an engine failure, a bug) ever reaches the
/// client as anything but `application/problem+json`. A 5xx is logged.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ProblemError {
            return ProblemError.response(for: error.problem)
        } catch let problem as Problem {
            return ProblemError.response(for: problem)
        } catch let error as HTTPError {
            let problem: Problem = switch error.status.code {
            case 404: ProblemCatalog.problem(code: "not_found", detail: "no route for \(request.method) \(request.uri.path)")
            case 405: ProblemCatalog.problem(code: "method_not_allowed", detail: "\(request.uri.path) does not accept \(request.method)")
            case 413: ProblemCatalog.problem(code: "payload_too_large", detail: "the request body is larger than \(JSONBody.maximumBytes) bytes")
            case 400..<500: ProblemCatalog.problem(code: "malformed_request", detail: error.body ?? "\(error.status)")
            default: ProblemCatalog.problem(code: "internal_error", detail: "\(error.status)")
            }
            return ProblemError.response(for: problem)
        } catch {
            context.logger.error("unhandled error: \(error)")
            return ProblemError.response(for: ProblemCatalog.problem(code: "internal_error", detail: "the server failed to answer this request"))
        }
    }
}
