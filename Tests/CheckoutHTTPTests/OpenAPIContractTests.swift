import CheckoutHTTP
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

/// The checked-in OpenAPI document matches what the server does: it is what
/// `GET /openapi.json` serves, every documented path answers (never the
/// router's 404), and real responses of each route validate against the
/// document's schema for that route and status.
@Suite struct OpenAPIContractTests {
    @Test func realResponsesMatchTheDocument() async throws {
        // Private webhook endpoints allowed: a loopback one registers without DNS (none is delivered to: no event follows it).
        try await APIFixture.with(adminToken: APIFixture.adminToken, allowPrivateWebhooks: true) { fixture in
            let contract = try Contract()
            try await fixture.app().test(.router) { client in
                let served = try await client.json(.get, "/openapi.json")
                #expect((served.object["openapi"] as? String) == "3.1.0")
                #expect((served.object["paths"] as? [String: Any])?.keys.sorted() == contract.paths.keys.sorted())

                var checked: [String] = []
                // `status`: the one the reply must have, when the check means one.
                func check(_ method: String, _ template: String, _ reply: Reply, status: Int? = nil, _ location: SourceLocation = #_sourceLocation) {
                    let errors = contract.validate(method: method, path: template, status: reply.status, body: reply.json)
                    #expect(errors.isEmpty, "\(method) \(template) \(reply.status): \(errors) in \(reply.text.prefix(400))", sourceLocation: location)
                    if let status {
                        #expect(reply.status == status, "\(method) \(template): \(reply.status), not \(status): \(reply.text.prefix(400))", sourceLocation: location)
                    }
                    checked.append("\(method) \(template) \(reply.status)")
                }
                let auth: HTTPFields = [.authorization: "Bearer \(APIFixture.adminToken)"]
                let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","capture":"manual","payer":{"name":"N"}}"#)
                check("post", "/v1/sessions", created)
                let id = try #require(created.string("id"))
                check("post", "/v1/sessions", try await client.json(.post, "/v1/sessions", #"{"amount":1}"#))
                check("get", "/v1/sessions/{id}", try await client.json(.get, "/v1/sessions/\(id)"))
                check("get", "/v1/sessions/{id}", try await client.json(.get, "/v1/sessions/missing"))
                check("get", "/v1/sessions/{id}", try await client.json(.get, "/v1/sessions/\(id)", key: nil))
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
                check("get", "/v1/payments/{id}", try await client.json(.get, "/v1/payments/\(attemptID)"))
                check("get", "/v1/payments/{id}", try await client.json(.get, "/v1/payments/att_nope"))
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

                // Merchants' webhook endpoints, registered last so that no event is queued for them.
                let hooks = "/v1/webhook-endpoints"
                let loopback = #"{"url":"http://127.0.0.1:9/h"}"#
                let hook = try await client.json(.post, hooks, loopback)
                check("post", hooks, hook, status: 201)
                let hookID = try #require(hook.string("id"), "\(hook.text)")
                #expect(hook.string("secret")?.hasPrefix("whsec_") == true && hook["publicKey"] == nil, "\(hook.text)")
                let signed = try await client.json(.post, hooks, #"{"url":"http://127.0.0.1:9/h","types":["session.created"],"description":"contract","signing":"v1a"}"#)
                check("post", hooks, signed, status: 201)
                // A v1a endpoint's private key never leaves the gateway: the answer has its public key only.
                #expect(signed["secret"] == nil && signed.string("publicKey")?.hasPrefix("whpk_") == true, "\(signed.text)")
                check("post", hooks, try await client.json(.post, hooks, #"{"url":"http://127.0.0.1:9/h","types":["no.such_type"]}"#), status: 422)
                check("post", hooks, try await client.json(.post, hooks, #"{"url":"ftp://127.0.0.1/h"}"#), status: 422)
                check("post", hooks, try await client.json(.post, hooks, #"{"types":["session.created"]}"#), status: 400)
                check("post", hooks, try await client.json(.post, hooks, loopback, key: nil), status: 401)
                let list = try await client.json(.get, hooks)
                check("get", hooks, list, status: 200)
                #expect((list["data"] as? [[String: Any]])?.contains { $0["secret"] != nil } == false, "a listed endpoint shows its secret: \(list.text)")
                let one = try await client.json(.get, "\(hooks)/\(hookID)")
                check("get", "\(hooks)/{id}", one, status: 200)
                #expect(one["deliveries"] is [String: Any] && one["secret"] == nil, "\(one.text)")
                check("get", "\(hooks)/{id}", try await client.json(.get, "\(hooks)/we_missing"), status: 404)
                let rotated = try await client.json(.post, "\(hooks)/\(hookID)/rotate", #"{"overlapSeconds":3600}"#)
                check("post", "\(hooks)/{id}/rotate", rotated, status: 200)
                #expect(rotated.string("secret")?.hasPrefix("whsec_") == true && rotated.string("secret") != hook.string("secret"), "\(rotated.text)")
                #expect(rotated["previousSecretUntil"] is String, "the old secret signs on for the overlap: \(rotated.text)")
                check("post", "\(hooks)/{id}/rotate", try await client.json(.post, "\(hooks)/\(hookID)/rotate"), status: 200)
                check("post", "\(hooks)/{id}/rotate", try await client.json(.post, "\(hooks)/\(hookID)/rotate", #"{"overlapSeconds":604801}"#), status: 422)
                check("post", "\(hooks)/{id}/rotate", try await client.json(.post, "\(hooks)/we_missing/rotate", "{}"), status: 404)
                let disabled = try await client.json(.post, "\(hooks)/\(hookID)/disable")
                check("post", "\(hooks)/{id}/disable", disabled, status: 200)
                #expect(disabled.string("state") == "disabled" && disabled["stateReason"] is String, "\(disabled.text)")
                check("post", "\(hooks)/{id}/enable", try await client.json(.post, "\(hooks)/\(hookID)/enable", "{}"), status: 200)
                check("post", "\(hooks)/{id}/enable", try await client.json(.post, "\(hooks)/we_missing/enable"), status: 404)
                check("post", "\(hooks)/{id}/replay", try await client.json(.post, "\(hooks)/\(hookID)/replay"), status: 200)
                check("post", "\(hooks)/{id}/replay", try await client.json(.post, "\(hooks)/\(hookID)/replay", #"{"after":"cur_0_0","through":"cur_0_1"}"#), status: 200)
                check("post", "\(hooks)/{id}/replay", try await client.json(.post, "\(hooks)/\(hookID)/replay", #"{"after":"cur_x"}"#), status: 400)

                // The event feed lists the first session's creation.
                let feed = try await client.json(.get, "/v1/events")
                check("get", "/v1/events", feed, status: 200)
                let listsCreation = (feed["data"] as? [[String: Any]] ?? []).contains { $0["sessionId"] as? String == id && $0["type"] as? String == "session.created" }
                #expect(listsCreation, "session \(id)'s session.created is not in the feed: \(feed.text.prefix(400))")
                let next = try #require(feed.string("next"), "\(feed.text.prefix(400))")
                check("get", "/v1/events", try await client.json(.get, "/v1/events?after=\(next)&type=session.created&type=attempt.succeeded&limit=5"), status: 200)
                for bad in ["after=nope", "type=no.such_type", "limit=0", "limit=1001"] {
                    check("get", "/v1/events", try await client.json(.get, "/v1/events?\(bad)"), status: 400)
                }

                let removed = try await client.json(.delete, "\(hooks)/\(hookID)")
                check("delete", "\(hooks)/{id}", removed, status: 200)
                #expect(removed["removedAt"] is String, "\(removed.text)")
                check("delete", "\(hooks)/{id}", try await client.json(.delete, "\(hooks)/\(hookID)"), status: 404)
                check("get", "\(hooks)/{id}", try await client.json(.get, "\(hooks)/\(hookID)"), status: 404)
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
        }
    }
}

/// What a strict client found the server doing that the document did not
/// say (issue 13, build item 9), each pinned by a test that failed before.
@Suite struct ContractFindingsTests {
    /// A replayed answer is the first answer, byte for byte: before, a
    /// session's committed answer was encoded before the commit bumped its
    /// version, so the first answer said `version` 1 and every replay 0.
    @Test func aReplayedAnswerIsTheOriginalByteForByte() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                func twice(_ method: HTTPRequest.Method, _ path: String, _ body: String?, key: String,
                           _ location: SourceLocation = #_sourceLocation) async throws -> Reply {
                    let first = try await client.json(method, path, body, headers: idempotency(key))
                    let replay = try await client.json(method, path, body, headers: idempotency(key))
                    #expect(first.status < 300 && replay.status == first.status, "\(path): \(first.status) \(first.text.prefix(300))", sourceLocation: location)
                    #expect(replay.text == first.text, "\(path): the replay differs\n\(first.text)\n\(replay.text)", sourceLocation: location)
                    return first
                }
                let manual = #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-r","capture":"manual"}"#
                let created = try await twice(.post, "/v1/sessions", manual, key: "create-1")
                #expect(created["version"] as? Int == 1, "the answer is the session as committed")
                let id = try #require(created.string("id"))
                let payment = try #require(try await twice(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada"}"#, key: "pay-1").string("id"))
                _ = try await twice(.post, "/v1/payments/\(payment)/capture", #"{"amount":1000}"#, key: "capture-1")
                _ = try await twice(.post, "/v1/payments/\(payment)/refund", #"{"amount":400}"#, key: "refund-1")

                let other = try #require(try await client.json(.post, "/v1/sessions", manual).string("id"))
                let authorized = try #require(try await client.json(.post, "/v1/sessions/\(other)/attempts", #"{"method":"mada"}"#).string("id"))
                _ = try await twice(.post, "/v1/payments/\(authorized)/void", nil, key: "void-1")

                let third = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                let pending = try await client.json(.post, "/v1/sessions/\(third)/attempts", #"{"method":"visa","provider":"mock","instrument":{"scenario":"three_ds"}}"#)
                let attemptID = try #require(pending.string("id"))
                _ = try await twice(.post, "/v1/sessions/\(third)/attempts/\(attemptID)/continue", #"{"returnParams":{"outcome":"approve"}}"#, key: "continue-1")

                let fourth = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                let aborted = try await twice(.post, "/v1/sessions/\(fourth)/abort", nil, key: "abort-1")
                #expect(aborted["version"] as? Int == 2 && aborted.string("status") == "cancelled")
            }
        }
    }

    /// An unknown member inside `payer` is refused as one at the top level
    /// is, naming its JSON path; before, it was dropped silently.
    @Test func anUnknownMemberInsidePayerIsRefusedWithItsPath() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let nested = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","payer":{"name":"N","nickname":"x"}}"#)
                #expect(nested.status == 400 && nested.problemCode == "malformed_request", "\(nested.text)")
                let detail = try #require(nested["detail"] as? String)
                #expect(detail.contains(#""payer.nickname""#) && detail.contains("allowed in payer: email, name, phone"), "\(detail)")
                let top = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","nickname":"x"}"#)
                #expect(top.status == 400 && (top["detail"] as? String)?.contains(#""nickname""#) == true, "\(top.text)")
                let wrongType = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","payer":{"name":5}}"#)
                #expect(wrongType.status == 400 && (wrongType["detail"] as? String)?.contains("payer.name must be a string") == true, "\(wrongType.text)")
                // No member is nullable: an optional one is left out, never null (the document has no null).
                for body in [#"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","returnUrl":null}"#,
                             #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","payer":{"name":null}}"#] {
                    let null = try await client.json(.post, "/v1/sessions", body)
                    #expect(null.status == 400 && (null["detail"] as? String)?.contains("is null") == true, "\(body): \(null.text)")
                }
                // A payer of known members, and the free-form instrument, still pass.
                let fine = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","payer":{"name":"N","email":"e@x.sa","phone":"+966"}}"#)
                #expect(fine.status == 201, "\(fine.text)")
            }
        }
    }

    /// A webhook for a provider with no adapter here (unknown, or disabled
    /// from the start) is a documented 404, not a 502 blaming a provider.
    @Test func aWebhookForAnUnknownOrDisabledProviderIs404() async throws {
        try await APIFixture.with { fixture in
            let contract = try Contract()
            try await fixture.app().test(.router) { client in
                for provider in ["nobody", "hyperpay"] {
                    let reply = try await client.json(.post, "/v1/webhooks/\(provider)", "{}", key: nil)
                    #expect(reply.status == 404 && reply.problemCode == "not_found", "\(provider): \(reply.status) \(reply.text)")
                    #expect(contract.validate(method: "post", path: "/v1/webhooks/{providerId}", status: reply.status, body: reply.json).isEmpty)
                }
            }
        }
    }

    /// A method a known path does not take is a 405 problem whose `Allow`
    /// lists the methods it does take; before, it was the router's 404.
    @Test func aWrongMethodOnAKnownPathIs405WithAllow() async throws {
        try await APIFixture.with(adminToken: APIFixture.adminToken) { fixture in
            try await fixture.app().test(.router) { client in
                let cases: [(HTTPRequest.Method, String, String)] = [
                    (.delete, "/v1/sessions", "POST"),
                    (.get, "/v1/sessions", "POST"),
                    (.put, "/v1/sessions/ses_x", "GET"),
                    (.get, "/v1/sessions/ses_x/abort", "POST"),
                    (.patch, "/v1/payments/att_x/capture", "POST"),
                    (.get, "/v1/webhooks/mock", "POST"),
                    (.post, "/healthz", "GET, HEAD"),
                    (.delete, "/readyz", "GET, HEAD"),
                    (.head, "/metrics", "GET"),
                    (.get, "/admin/reload", "POST"),
                    (HTTPRequest.Method("TRACE")!, "//v1//providers", "GET"),
                ]
                for (method, path, allow) in cases {
                    let reply = try await client.json(method, path, nil, key: nil)
                    #expect(reply.status == 405, "\(method) \(path): \(reply.status) \(reply.text)")
                    #expect(reply.headers[.allow] == allow, "\(method) \(path): Allow \(reply.headers[.allow] ?? "missing")")
                    if method != .head { #expect(reply.problemCode == "method_not_allowed", "\(method) \(path): \(reply.text)") }
                }
                // A path no route has is still a 404.
                let nowhere = try await client.json(.delete, "/v1/nothing", nil)
                #expect(nowhere.status == 404 && nowhere.problemCode == "not_found" && nowhere.headers[.allow] == nil)
            }
        }
    }

    /// `HEAD /healthz` and `HEAD /readyz` answer as their GET, without a body.
    @Test func headOnTheProbesAnswersAsGetWithoutABody() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                for path in ["/healthz", "/readyz"] {
                    let get = try await client.json(.get, path, key: nil)
                    let head = try await client.json(.head, path, key: nil)
                    #expect(head.status == 200 && get.status == 200, "\(path): HEAD \(head.status)")
                    #expect(head.text.isEmpty && head.headers[.contentType] == "application/json")
                    #expect(head.headers[.contentLength] == String(get.text.utf8.count), "\(path): \(head.headers)")
                }
            }
        }
    }

    /// A request the HTTP parser refuses gets a 400 problem, then the
    /// connection is closed; before, an empty 400.
    @Test(.heavy) func aRequestTheParserRefusesGetsAProblem() async throws {
        try await APIFixture.with { fixture in
            try await LiveServer.with(fixture) { server in
                let malformed = [
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
                    "NOT A REQUEST\r\n\r\n",
                    // After a good request on the same connection too.
                    "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost x\r\n\r\n",
                ]
                for request in malformed {
                    let answer = try await RawHTTP.exchange(port: server.port, request)
                    let last = try #require(answer.range(of: "HTTP/1.1 400", options: .backwards).map { String(answer[$0.lowerBound...]) },
                                            "no 400 to \(request.debugDescription): \(answer)")
                    #expect(last.lowercased().contains("content-type: application/problem+json"), "\(last)")
                    let body = try #require(last.components(separatedBy: "\r\n\r\n").dropFirst().first, "\(last)")
                    let problem = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
                    #expect(problem["code"] as? String == "malformed_request" && problem["status"] as? Int == 400, "\(body)")
                    if request.contains("\r\n\r\nGET") { #expect(answer.hasPrefix("HTTP/1.1 200"), "the good request first: \(answer)") }
                }
            }
        }
    }

    /// An `X-Request-Id` holding a card number is logged and echoed with the
    /// number masked; one that is not a plain token is replaced by the
    /// server's own id; before, both were logged and echoed as sent.
    @Test func aRequestIdHoldingACardNumberIsMaskedAndAnUnsafeOneReplaced() async throws {
        try await APIFixture.with { fixture in
            let requestID = HTTPField.Name("X-Request-Id")!
            try await fixture.app().test(.router) { client in
                let card = try await client.json(.get, "/healthz", headers: [requestID: "4111111111111111"])
                #expect(card.headers[requestID] == "************1111", "\(card.headers)")
                let glued = try await client.json(.get, "/healthz", headers: [requestID: "req-4111111111111111-7"])
                let masked = try #require(glued.headers[requestID])
                #expect(masked.hasPrefix("req-*") && !masked.contains("41111111"), "\(masked)")
                for unsafe in ["has space", #"quote""#, "semi;colon", String(repeating: "a", count: 129), "gk_test_0123456789abcdefghjkmnpqrstvwxyz"] {
                    let reply = try await client.json(.get, "/healthz", headers: [requestID: unsafe])
                    let echoed = try #require(reply.headers[requestID])
                    #expect(echoed != unsafe && !echoed.isEmpty, "\(unsafe) was kept")
                }
                let plain = try await client.json(.get, "/healthz", headers: [requestID: "order-42.retry_1:a"])
                #expect(plain.headers[requestID] == "order-42.retry_1:a")
            }
            let logs = fixture.logs.all.joined(separator: "\n")
            #expect(!logs.contains("4111111111111111"), "a card number reached the logs")
            #expect(logs.contains("************1111"))
            #expect(!logs.contains("0123456789abcdefghjkmnpqrstvwxyz"), "an API key reached the logs")
        }
    }

    /// The document declares what the server enforces: `Idempotency-Key`
    /// required where the server requires it and of the shape it accepts;
    /// amounts int64 from 1; currency and country patterns (currency one of
    /// the gateway's); and the server refuses what the document excludes.
    @Test func theDocumentDeclaresWhatTheServerEnforces() async throws {
        let contract = try Contract()
        for (path, operations) in contract.paths {
            for (method, operation) in operations {
                let parameters = (operation as? [String: Any])?["parameters"] as? [[String: Any]] ?? []
                guard let key = parameters.first(where: { $0["name"] as? String == "Idempotency-Key" }) else { continue }
                #expect(key["required"] as? Bool == path.hasPrefix("/v1/payments/"), "\(method) \(path): Idempotency-Key required?")
                let schema = key["schema"] as? [String: Any] ?? [:]
                #expect(schema["minLength"] as? Int == 1 && schema["maxLength"] as? Int == 255 && schema["pattern"] as? String == "^[!-~]{1,255}$")
            }
        }
        let schemas = try #require((contract.document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let create = try #require((schemas["CreateSession"] as? [String: Any])?["properties"] as? [String: [String: Any]])
        #expect(create["amount"]?["format"] as? String == "int64" && create["amount"]?["minimum"] as? Int == 1)
        #expect(create["currency"]?["pattern"] as? String == "^[A-Z]{3}$")
        #expect((create["currency"]?["enum"] as? [String])?.sorted() == Currency.known.keys.sorted(), "the currencies the gateway knows")
        #expect(create["country"]?["pattern"] as? String == "^[A-Z]{2}$")
        #expect(create["orderId"]?["minLength"] as? Int == 1)
        let amount = try #require((schemas["Amount"] as? [String: Any])?["properties"] as? [String: [String: Any]])
        #expect(amount["amount"]?["format"] as? String == "int64" && amount["amount"]?["minimum"] as? Int == 1)
        #expect((contract.document["info"] as? [String: Any])?["description"].map { "\($0)" }?.contains("\(65536) bytes") == true)

        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                func expect(_ reply: Reply, _ status: Int, _ location: SourceLocation = #_sourceLocation) {
                    #expect(reply.status == status && reply.isProblem, "\(reply.status) \(reply.text)", sourceLocation: location)
                }
                let id = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                let payment = try #require(try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada"}"#).string("id"))
                expect(try await client.json(.post, "/v1/payments/\(payment)/refund", #"{"amount":1}"#), 422)
                for bad in ["", "has space", String(repeating: "k", count: 256), "tab\there", "ключ"] {
                    var headers = HTTPFields()
                    headers[HTTPField.Name("Idempotency-Key")!] = bad
                    expect(try await client.json(.post, "/v1/sessions", newSession, headers: headers), 400)
                }
                #expect(try await client.json(.post, "/v1/sessions", newSession, headers: idempotency(String(repeating: "k", count: 255))).status == 201)
                expect(try await client.json(.get, "/v1/sessions/\(id)/events?after=abc"), 400)
                expect(try await client.json(.get, "/v1/sessions/\(id)/events?after=-1"), 400)
                expect(try await client.json(.get, "/v1/sessions/\(id)/events", headers: [HTTPField.Name("Last-Event-ID")!: "x1"]), 400)
            }
        }
    }
}

/// A request written on a plain socket, for what no HTTP client sends.
enum RawHTTP {
    /// Sends `request` and reads until the server closes the connection (or
    /// two minutes pass, scaled by `GATEWAY_TEST_TIME_SCALE`: a backstop; in
    /// the suite's first minute, with every test starting at once on two
    /// cores, an answer took over 30 s once and came back empty), on a
    /// thread of its own.
    static func exchange(port: Int, _ request: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try blockingExchange(port: port, request) })
            }.start()
        }
    }

    private static func blockingExchange(port: Int, _ request: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(TestTime.seconds(120))
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count > 0 { received += buffer[0..<count] }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO, userInfo: ["received": String(decoding: received, as: UTF8.self)])
            }
        }
        return String(decoding: received, as: UTF8.self)
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
            // The one date format on the wire: RFC 3339, UTC, milliseconds.
            if schema["format"] as? String == "date-time", let text = value as? String,
               text.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) == nil {
                errors.append("\(path): \(text) is not an RFC 3339 UTC date-time with milliseconds")
            }
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
