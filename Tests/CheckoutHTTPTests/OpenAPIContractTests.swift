import CheckoutHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The checked-in OpenAPI document matches what the server does: it is what
/// `GET /openapi.json` serves, every documented path answers (never the
/// router's 404), and real responses of each route validate against the
/// document's schema for that route and status.
@Suite struct OpenAPIContractTests {
    @Test func realResponsesMatchTheDocument() async throws {
        let fixture = try APIFixture(adminToken: APIFixture.adminToken)
        let contract = try Contract()
        try await fixture.app().test(.router) { client in
            let served = try await client.json(.get, "/openapi.json")
            #expect((served.object["openapi"] as? String) == "3.1.0")
            #expect((served.object["paths"] as? [String: Any])?.keys.sorted() == contract.paths.keys.sorted())

            var checked: [String] = []
            func check(_ method: String, _ template: String, _ reply: Reply, _ location: SourceLocation = #_sourceLocation) {
                let errors = contract.validate(method: method, path: template, status: reply.status, body: reply.json)
                #expect(errors.isEmpty, "\(method) \(template) \(reply.status): \(errors) in \(reply.text.prefix(400))", sourceLocation: location)
                checked.append("\(method) \(template) \(reply.status)")
            }
            let auth: HTTPFields = [.authorization: "Bearer \(APIFixture.adminToken)"]
            let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","capture":"manual","payer":{"name":"N"}}"#)
            check("post", "/v1/sessions", created)
            let id = try #require(created.string("id"))
            check("post", "/v1/sessions", try await client.json(.post, "/v1/sessions", #"{"amount":1}"#))
            check("get", "/v1/sessions/{id}", try await client.json(.get, "/v1/sessions/\(id)"))
            check("get", "/v1/sessions/{id}", try await client.json(.get, "/v1/sessions/missing"))
            let pending = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"visa","provider":"mock","instrument":{"scenario":"three_ds"}}"#)
            check("post", "/v1/sessions/{id}/attempts", pending)
            let attemptID = try #require(pending.string("id"))
            let done = try await client.json(.post, "/v1/sessions/\(id)/attempts/\(attemptID)/continue", #"{"returnParams":{"outcome":"approve"}}"#)
            check("post", "/v1/sessions/{id}/attempts/{attemptId}/continue", done)
            check("post", "/v1/sessions/{id}/abort", try await client.json(.post, "/v1/sessions/\(id)/abort"))
            check("post", "/v1/payments/{id}/capture", try await client.json(.post, "/v1/payments/\(attemptID)/capture", #"{"amount":1000}"#, headers: idempotency("c")))
            check("post", "/v1/payments/{id}/refund", try await client.json(.post, "/v1/payments/\(attemptID)/refund", #"{"amount":100}"#, headers: idempotency("r")))
            check("post", "/v1/payments/{id}/void", try await client.json(.post, "/v1/payments/\(attemptID)/void", nil, headers: idempotency("v")))
            check("post", "/v1/payments/{id}/verify", try await client.json(.post, "/v1/payments/\(attemptID)/verify"))
            let other = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
            check("post", "/v1/sessions/{id}/abort", try await client.json(.post, "/v1/sessions/\(other)/abort"))
            let declined = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
            check("post", "/v1/sessions/{id}/attempts", try await client.json(.post, "/v1/sessions/\(declined)/attempts", #"{"method":"mada","instrument":{"scenario":"card_declined"}}"#))
            check("post", "/v1/webhooks/{providerId}", try await client.json(.post, "/v1/webhooks/mock", "{}"))
            check("get", "/v1/providers", try await client.json(.get, "/v1/providers"))
            check("post", "/admin/reload", try await client.json(.post, "/admin/reload", headers: auth))
            check("post", "/admin/reload", try await client.json(.post, "/admin/reload"))
            check("post", "/admin/providers/{id}/disable", try await client.json(.post, "/admin/providers/example-c/disable", headers: auth))
            check("post", "/admin/providers/{id}/enable", try await client.json(.post, "/admin/providers/example-c/enable", headers: auth))
            check("get", "/healthz", try await client.json(.get, "/healthz"))
            check("get", "/readyz", try await client.json(.get, "/readyz"))
            #expect(checked.count >= 20)

            // Every documented path answers (a documented route the router lacks would be its 404).
            for (template, operations) in contract.paths {
                for method in operations.keys {
                    let path = template.replacingOccurrences(of: "{providerId}", with: "mock").replacingOccurrences(of: "{id}", with: "x")
                        .replacingOccurrences(of: "{attemptId}", with: "y")
                    let reply = try await client.json(HTTPRequest.Method(method.uppercased())!, path, method == "post" ? "{}" : nil, headers: auth)
                    let routerMiss = reply.status == 404 && (reply.object["detail"] as? String)?.hasPrefix("no route") == true
                    #expect(!routerMiss, "\(method) \(template) is documented but not served")
                }
            }
        }
        await fixture.gateway.shutdown()
    }
}

/// The OpenAPI document, and a validator for the JSON Schema it uses (type,
/// required, properties, additionalProperties, items, enum, $ref).
struct Contract: @unchecked Sendable {
    let document: [String: Any]
    var paths: [String: [String: Any]] { (document["paths"] as? [String: [String: Any]]) ?? [:] }

    init() throws {
        let url = BuildProductsRepository.url.appendingPathComponent("Sources/CheckoutHTTP/openapi.json")
        document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
    }

    func validate(method: String, path: String, status: Int, body: Any?) -> [String] {
        guard let operation = paths[path]?[method] as? [String: Any] else { return ["\(method) \(path) is not documented"] }
        guard var response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any] else {
            return ["status \(status) is not documented"]
        }
        if let ref = response["$ref"] as? String { response = resolve(ref) }
        guard let content = response["content"] as? [String: Any], let media = content.values.first as? [String: Any],
              let schema = media["schema"] as? [String: Any] else { return [] }
        var errors: [String] = []
        check(body as Any, against: schema, at: "$", errors: &errors)
        return errors
    }

    private func resolve(_ ref: String) -> [String: Any] {
        var node: Any = document
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] as Any }
        return node as? [String: Any] ?? [:]
    }

    private func check(_ value: Any, against schema: [String: Any], at path: String, errors: inout [String]) {
        if let ref = schema["$ref"] as? String { return check(value, against: resolve(ref), at: path, errors: &errors) }
        if let allowed = schema["enum"] as? [String], !allowed.contains(value as? String ?? "\u{0}") {
            errors.append("\(path): \(value) is not one of \(allowed)")
        }
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { return errors.append("\(path): expected an object") }
            for key in schema["required"] as? [String] ?? [] where object[key] == nil { errors.append("\(path).\(key) is required") }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (key, member) in object {
                if let property = properties[key] as? [String: Any] {
                    check(member, against: property, at: "\(path).\(key)", errors: &errors)
                } else if schema["additionalProperties"] as? Bool == false {
                    errors.append("\(path).\(key) is not in the schema")
                } else if let extra = schema["additionalProperties"] as? [String: Any] {
                    check(member, against: extra, at: "\(path).\(key)", errors: &errors)
                }
            }
        case "array":
            guard let array = value as? [Any] else { return errors.append("\(path): expected an array") }
            if let items = schema["items"] as? [String: Any] {
                for (index, item) in array.enumerated() { check(item, against: items, at: "\(path)[\(index)]", errors: &errors) }
            }
        case "string":
            if !(value is String) { errors.append("\(path): expected a string") }
        case "integer":
            if (value as? NSNumber).flatMap({ Int64(exactly: $0.doubleValue) }) == nil || value is String { errors.append("\(path): expected an integer") }
        case "number":
            if !(value is NSNumber) || value is String { errors.append("\(path): expected a number") }
        case "boolean":
            if !(value is Bool) && !(value is NSNumber) { errors.append("\(path): expected a boolean") }
        default:
            break
        }
    }
}

enum BuildProductsRepository {
    static var url: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
}
