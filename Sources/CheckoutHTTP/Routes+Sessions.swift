import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

extension CheckoutAPI {
    /// Sessions, attempts, continue, abort, events.
    func addSessionRoutes(to router: APIRouter) {
        let gateway = self.gateway
        let metrics = self.metrics

        router.post("/v1/sessions") { request, _ -> Response in
            let body = try await JSONBody.read(CreateSessionBody.self, from: request)
            let snapshot = try await gateway.createSession(body.request, idempotencyKey: Self.idempotencyKey(request))
            return Self.json(Self.sessionJSON(snapshot), status: .created)
        }

        router.get("/v1/sessions/:id") { _, context -> Response in
            let snapshot = try await gateway.session(try context.parameters.require("id"))
            return Self.json(Self.sessionJSON(snapshot))
        }

        router.post("/v1/sessions/:id/attempts") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(AttemptBody.self, from: request)
            let attempt = try await gateway.attempt(session: id, body.request, idempotencyKey: Self.idempotencyKey(request))
            metrics.attempt(attempt)
            return Self.json(attempt, status: .created)
        }

        router.post("/v1/sessions/:id/attempts/:attemptId/continue") { request, context -> Response in
            let id = try context.parameters.require("id")
            let attemptID = try context.parameters.require("attemptId")
            let body = try await JSONBody.read(ContinueBody.self, from: request, allowEmpty: ContinueBody())
            let attempt = try await gateway.proceed(session: id, attempt: attemptID, body.input, idempotencyKey: Self.idempotencyKey(request))
            metrics.attempt(attempt)
            return Self.json(attempt)
        }

        router.post("/v1/sessions/:id/abort") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try await JSONBody.read(EmptyBody.self, from: request, allowEmpty: EmptyBody())
            let snapshot = try await gateway.abort(session: id, idempotencyKey: Self.idempotencyKey(request))
            return Self.json(Self.sessionJSON(snapshot))
        }

        router.get("/v1/sessions/:id/events") { request, context -> Response in
            let id = try context.parameters.require("id")
            let after = request.headers[EventStream.lastEventID].flatMap { Int64($0) }
                ?? request.uri.queryParameters.get("after").flatMap { Int64($0) } ?? 0
            let events = try await gateway.events(ofSession: id, after: after)
            return EventStream.response(events)
        }
    }
}
