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

        router.post("/v1/sessions") { request, context -> Response in
            let body = try await JSONBody.read(CreateSessionBody.self, from: request)
            let snapshot = try await gateway.createSession(body.request, idempotencyKey: Self.idempotencyKey(request), mode: try context.callerMode())
            return Self.json(Self.sessionJSON(snapshot), status: .created)
        }

        router.get("/v1/sessions/:id") { _, context -> Response in
            let snapshot = try await gateway.session(try context.parameters.require("id"), mode: try context.callerMode())
            return Self.json(Self.sessionJSON(snapshot))
        }

        router.post("/v1/sessions/:id/attempts") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(AttemptBody.self, from: request)
            let attempt = try await gateway.attempt(session: id, body.request, idempotencyKey: Self.idempotencyKey(request), mode: try context.callerMode())
            metrics.attempt(attempt)
            return Self.json(attempt, status: .created)
        }

        router.post("/v1/sessions/:id/attempts/:attemptId/continue") { request, context -> Response in
            let id = try context.parameters.require("id")
            let attemptID = try context.parameters.require("attemptId")
            let body = try await JSONBody.read(ContinueBody.self, from: request, allowEmpty: ContinueBody())
            let attempt = try await gateway.proceed(session: id, attempt: attemptID, body.input, idempotencyKey: Self.idempotencyKey(request),
                                                    mode: try context.callerMode())
            metrics.attempt(attempt)
            return Self.json(attempt)
        }

        router.post("/v1/sessions/:id/abort") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try await JSONBody.read(EmptyBody.self, from: request, allowEmpty: EmptyBody())
            let snapshot = try await gateway.abort(session: id, idempotencyKey: Self.idempotencyKey(request), mode: try context.callerMode())
            return Self.json(Self.sessionJSON(snapshot))
        }

        // What the payer typed, checked against the method's form while they
        // type: 200 when every field is right, else 422 invalid_fields with
        // one problem per field. Values (a card number among them) are never
        // logged, stored or echoed.
        router.post("/v1/sessions/:id/validate") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(ValidateBody.self, from: request)
            try await gateway.validate(session: id, method: body.method, values: body.values, mode: try context.callerMode())
            return Self.json(Array(#"{"valid":true}"#.utf8))
        }

        // A card's first digits: its brand and co-brands, and whether each
        // may pay in this session. Only the first six digits are read; the
        // prefix is never logged, stored or echoed beyond them.
        router.post("/v1/sessions/:id/iin") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(IINBody.self, from: request)
            return Self.json(try await gateway.iin(session: id, prefix: body.prefix, mode: try context.callerMode()).jsonBytes())
        }

        router.get("/v1/sessions/:id/events") { request, context -> Response in
            let id = try context.parameters.require("id")
            let after = try Self.eventNumber(request.headers[EventStream.lastEventID], named: "Last-Event-ID")
                ?? Self.eventNumber(request.uri.queryParameters.get("after").map { String($0) }, named: "after") ?? 0
            let events = try await gateway.events(ofSession: id, after: after, mode: try context.callerMode())
            return EventStream.response(events)
        }
    }

    /// An event number given by `Last-Event-ID` or `after`: 1 to 18 digits
    /// (the document's pattern); nil when not given (or empty), a `400` when
    /// it is anything else, rather than a stream that silently starts elsewhere.
    static func eventNumber(_ text: String?, named name: String) throws -> Int64? {
        guard let text, !text.isEmpty else { return nil }
        guard text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let number = Int64(text) else {
            throw ProblemError(code: .malformedRequest, detail: "\(name) must be an event number: 1 to 18 digits")
        }
        return number
    }
}

/// `POST /v1/sessions/{id}/validate`: a method and what the payer typed, by field id.
struct ValidateBody: RequestBody {
    var method: String
    var values: [String: String]
    static let members: Set<String> = ["method", "values"]

    init(reading body: BodyMembers) throws(ProblemError) {
        method = try body.string("method")
        values = try body.stringMap("values")
    }
}

/// `POST /v1/sessions/{id}/iin`: the digits the payer has typed so far.
struct IINBody: RequestBody {
    var prefix: String
    static let members: Set<String> = ["prefix"]

    init(reading body: BodyMembers) throws(ProblemError) {
        prefix = try body.string("prefix")
    }
}
