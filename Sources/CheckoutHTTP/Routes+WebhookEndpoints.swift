import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import MerchantWebhooks
import NIOCore
import PaymentGateway

extension CheckoutAPI {
    /// Merchants' webhook endpoints and the event feed (docs/webhooks.md),
    /// each within the caller's mode: a test key sees and registers test
    /// endpoints, which receive test events only.
    func addEndpointRoutes(to router: APIRouter) {
        let gateway = self.gateway

        @Sendable func endpoints() throws -> WebhookEndpoints {
            guard let endpoints = gateway.webhooks else {
                throw ProblemError(code: .notFound, detail: "this gateway's store keeps no webhook endpoints")
            }
            return endpoints
        }
        @Sendable func refused<T>(_ body: () async throws -> T) async throws -> T {
            do {
                return try await body()
            } catch let error as WebhookEndpointError {
                throw ProblemError(code: .invalidRequest, detail: error.message)
            } catch let conflict as WebhookEndpointConflict {
                throw ProblemError(code: .invalidState, detail: conflict.description)
            }
        }
        @Sendable func missing(_ id: String) -> ProblemError {
            ProblemError(code: .notFound, detail: "no webhook endpoint \(id.prefix(64)) in this mode")
        }

        router.post("/v1/webhook-endpoints") { request, context -> Response in
            let body = try await JSONBody.read(EndpointBody.self, from: request)
            let mode = try context.callerMode()
            let created = try await refused {
                try await endpoints().create(url: body.url, mode: mode, types: body.types, description: body.description,
                                             signing: body.signing ?? .hmac)
            }
            return Self.json(WebhookEndpointJSON.bytes(created.endpoint, secret: created.secret), status: .created)
        }

        router.get("/v1/webhook-endpoints") { _, context -> Response in
            let list = try await endpoints().list(mode: try context.callerMode())
            var w = JSONWriter(capacity: 256 + 384 * list.count)
            w.beginObject()
            w.key("data")
            w.beginArray()
            for endpoint in list { WebhookEndpointJSON.write(endpoint, to: &w) }
            w.endArray()
            w.endObject()
            return Self.json(w.bytes)
        }

        router.get("/v1/webhook-endpoints/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            guard let found = try await endpoints().endpoint(id, mode: try context.callerMode()) else { throw missing(id) }
            return Self.json(WebhookEndpointJSON.bytes(found, counts: try await endpoints().counts(id)))
        }

        router.delete("/v1/webhook-endpoints/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            guard let removed = try await refused({ try await endpoints().remove(id, mode: try context.callerMode()) }) else { throw missing(id) }
            return Self.json(WebhookEndpointJSON.bytes(removed))
        }

        router.post("/v1/webhook-endpoints/:id/rotate") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(RotateBody.self, from: request, allowEmpty: RotateBody())
            let rotated = try await refused {
                try await endpoints().rotate(id, mode: try context.callerMode(),
                                             overlap: body.overlapSeconds.map { .seconds($0) } ?? WebhookEndpoints.defaultOverlap)
            }
            guard let rotated else { throw missing(id) }
            return Self.json(WebhookEndpointJSON.bytes(rotated.endpoint, secret: rotated.secret))
        }

        for (path, enabled) in [("enable", true), ("disable", false)] {
            router.post("/v1/webhook-endpoints/:id/\(path)") { request, context -> Response in
                let id = try context.parameters.require("id")
                _ = try await JSONBody.read(EmptyBody.self, from: request, allowEmpty: EmptyBody())
                guard let changed = try await refused({ try await endpoints().setEnabled(id, mode: try context.callerMode(), enabled) }) else {
                    throw missing(id)
                }
                return Self.json(WebhookEndpointJSON.bytes(changed))
            }
        }

        router.post("/v1/webhook-endpoints/:id/replay") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await JSONBody.read(ReplayBody.self, from: request, allowEmpty: ReplayBody())
            guard let count = try await endpoints().replay(id, mode: try context.callerMode(), after: body.after ?? .start, through: body.through) else {
                throw missing(id)
            }
            return Self.json(Array(#"{"replayed":\#(count)}"#.utf8))
        }

        router.get("/v1/events") { request, context -> Response in
            let query = request.uri.queryParameters
            let after = try Self.cursor(query.get("after").map { String($0) }, named: "after") ?? .start
            let types = query.getAll("type").map { String($0) }
            let known = Set(SessionEvent.Kind.all.map(\.rawValue))
            for type in types where !known.contains(type) {
                throw ProblemError(code: .malformedRequest, detail: "type: \"\(type.prefix(64))\" is not an event type")
            }
            var limit = 100
            if let text = query.get("limit") {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw ProblemError(code: .malformedRequest, detail: "limit must be a whole number from 1 to 1000")
                }
                limit = value
            }
            let page = try await gateway.eventFeed(after: after, mode: try context.callerMode(), types: types.isEmpty ? nil : Set(types), limit: limit)
            var w = JSONWriter(capacity: 256 + 320 * page.events.count)
            w.beginObject()
            w.key("data")
            w.beginArray()
            for event in page.events {
                w.beginObject()
                WebhookBody.writeMembers(event, to: &w)
                // Where it is in the feed: what a replay's `after` or `through` names.
                w.member("cursor", event.cursor.text)
                w.endObject()
            }
            w.endArray()
            w.member("next", page.next.text)
            w.member("hasMore", page.more)
            w.endObject()
            return Self.json(w.bytes)
        }
    }

    /// A feed cursor given as `name`; nil when not given, a `400` when it is not one.
    static func cursor(_ text: String?, named name: String) throws -> EventCursor? {
        guard let text, !text.isEmpty else { return nil }
        guard let cursor = EventCursor(text: text) else {
            throw ProblemError(code: .malformedRequest, detail: "\(name) must be a cursor from the event feed (cur_…)")
        }
        return cursor
    }
}

/// `POST /v1/webhook-endpoints`.
struct EndpointBody: RequestBody {
    static let members: Set<String> = ["url", "types", "description", "signing"]
    var url: String
    var types: [String]?
    var description: String?
    var signing: WebhookSigning?

    init(reading body: BodyMembers) throws(ProblemError) {
        url = try body.string("url")
        types = try body.optionalStringList("types")
        description = try body.optionalString("description")
        signing = try body.optionalEnumeration("signing", WebhookSigning.self)
    }
}

/// `POST /v1/webhook-endpoints/{id}/rotate`: how long the old secret keeps signing.
struct RotateBody: RequestBody {
    static let members: Set<String> = ["overlapSeconds"]
    var overlapSeconds: Int64?

    init() {}

    init(reading body: BodyMembers) throws(ProblemError) {
        overlapSeconds = try body.optionalInteger("overlapSeconds")
    }
}

/// `POST /v1/webhook-endpoints/{id}/replay`: the stretch of the feed to send again.
struct ReplayBody: RequestBody {
    static let members: Set<String> = ["after", "through"]
    var after: EventCursor?
    var through: EventCursor?

    init() {}

    init(reading body: BodyMembers) throws(ProblemError) {
        do {
            after = try CheckoutAPI.cursor(body.optionalString("after"), named: "after")
            through = try CheckoutAPI.cursor(body.optionalString("through"), named: "through")
        } catch let error as ProblemError {
            throw error
        } catch {
            throw ProblemError(code: .malformedRequest, detail: "\(error)")
        }
    }
}
