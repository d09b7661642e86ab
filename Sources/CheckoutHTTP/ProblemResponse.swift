import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Every error the API answers with is an RFC 9457 problem
/// (`application/problem+json`) carrying the engine's problem fields.
/// What a `503 store_unavailable` tells a client to wait before trying
/// again (`Retry-After`, seconds): about how long the store's pool takes to
/// reconnect to a database that is back.
let storeRetryAfterSeconds = StoreUnavailable.defaultRetryAfter

extension ProblemCatalog {
    /// The `503 store_unavailable` for a store failure met outside the
    /// engine, with `error` logged (at warning, once: here) and not told:
    /// its text may name the database's host, user and schema, and the
    /// caller may not be authenticated (`/readyz`, an API key's lookup).
    static func storeUnavailable(_ error: any Error, logger: Logger) -> Problem {
        let why = error is StoreUnavailable ? "\(error)" : "the payment store does not answer: \(error)"
        logger.warning("\(why)")
        return problem(code: .storeUnavailable, detail: StoreUnavailable.callerDetail(waiting: storeRetryAfterSeconds))
    }
}

struct ProblemError: Error, HTTPResponseError {
    var problem: Problem

    init(_ problem: Problem) {
        self.problem = problem
    }

    init(code: ProblemCode, detail: String) {
        problem = ProblemCatalog.problem(code: code, detail: detail)
    }

    var status: HTTPResponse.Status { HTTPResponse.Status(code: problem.status) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        ProblemError.response(for: problem)
    }

    static func response(for problem: Problem) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        // RFC 9110: a 401 carries a challenge. The API's and the admin
        // API's set their own (``Unauthorized``); a webhook's names the
        // provider's signature, the only credential a notification has.
        // The store is away (its database down or not answering): trying
        // again in a moment (under the same idempotency key) is what helps.
        if problem.code == .storeUnavailable {
            headers[.retryAfter] = "\(storeRetryAfterSeconds)"
        }
        if problem.status == 401 {
            headers[.wwwAuthenticate] = problem.code == .webhookUnverified
                ? #"Signature realm="gateway-webhooks""# : Unauthorized.challenge(realm: "gateway", tokenGiven: false)
        }
        return Response(status: HTTPResponse.Status(code: problem.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: problem.jsonBytes())))
    }
}

/// Turns whatever a route throws into a problem response, so that no error
/// (a router 404, a body too large, an engine failure, a bug) ever reaches the
/// client as anything but `application/problem+json`. A 5xx is logged.
///
/// The router's 404 for a path that exists with other methods (``routes``)
/// becomes a `405` whose `Allow` header lists them. The answer to a `HEAD`
/// never has a body, whatever its status (RFC 9110 §9.3.2): a problem's
/// bytes there would be read as the start of the next response.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    var routes: RouteMethods?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await answer(request, context: context, next: next)
        return request.method == .head ? response.createHeadResponse() : response
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ProblemError {
            return ProblemError.response(for: error.problem)
        } catch let problem as Problem {
            return ProblemError.response(for: problem)
        } catch let unavailable as StoreUnavailable {
            // A route that reads the store itself (an API key's lookup, the
            // event stream) rather than through the engine's problems.
            return ProblemError.response(for: ProblemCatalog.storeUnavailable(unavailable, logger: context.logger))
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = routes?.methods(forPath: request.uri.path) else {
                return ProblemError.response(for: ProblemCatalog.problem(code: .notFound, detail: "no route for \(request.method) \(request.uri.path)"))
            }
            let allow = RouteMethods.allowHeader(allowed)
            var response = ProblemError.response(for: ProblemCatalog.problem(
                code: .methodNotAllowed, detail: "\(request.uri.path) does not accept \(request.method); it accepts \(allow)"))
            response.headers[.allow] = allow
            return response
        } catch let error as HTTPError {
            let problem: Problem = switch error.status.code {
            case 413: ProblemCatalog.problem(code: .payloadTooLarge, detail: "the request body is larger than \(JSONBody.maximumBytes) bytes")
            case 400..<500: ProblemCatalog.problem(code: .malformedRequest, detail: error.body ?? "\(error.status)")
            default: ProblemCatalog.problem(code: .internalError, detail: "\(error.status)")
            }
            return ProblemError.response(for: problem)
        } catch {
            context.logger.error("unhandled error: \(error)")
            return ProblemError.response(for: ProblemCatalog.problem(code: .internalError, detail: "the server failed to answer this request"))
        }
    }
}
