import CheckoutEngine
import CheckoutHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

/// API keys: every `/v1` route but webhooks needs one, a key sees only its
/// own mode, and a refusal is a 401 with its challenge.
@Suite struct APIKeyTests {
    /// Every `/v1` route the document lists (webhooks aside), as a request.
    static let keyedRoutes: [(HTTPRequest.Method, String, String?)] = [
        (.post, "/v1/sessions", newSession),
        (.get, "/v1/sessions/ses_x", nil),
        (.post, "/v1/sessions/ses_x/attempts", #"{"method":"mada"}"#),
        (.post, "/v1/sessions/ses_x/attempts/att_y/continue", "{}"),
        (.post, "/v1/sessions/ses_x/abort", nil),
        (.get, "/v1/sessions/ses_x/events", nil),
        (.post, "/v1/payments/att_y/capture", "{}"),
        (.post, "/v1/payments/att_y/refund", "{}"),
        (.post, "/v1/payments/att_y/void", nil),
        (.post, "/v1/payments/att_y/verify", nil),
        (.get, "/v1/providers", nil),
    ]

    static func expectUnauthorized(_ reply: Reply, tokenGiven: Bool, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 401, "\(what): \(reply.status) \(reply.text.prefix(200))", sourceLocation: sourceLocation)
        #expect(reply.problemCode == "unauthorized", "\(what): \(reply.text.prefix(200))", sourceLocation: sourceLocation)
        let challenge = tokenGiven ? #"Bearer realm="gateway", error="invalid_token""# : #"Bearer realm="gateway""#
        #expect(reply.headers[.wwwAuthenticate] == challenge, "\(what): \(reply.headers[.wwwAuthenticate] ?? "no WWW-Authenticate")",
                sourceLocation: sourceLocation)
    }

    @Test func everyV1RouteButWebhooksAnswers401WithAChallengeWithoutAKey() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                for (method, path, body) in Self.keyedRoutes {
                    let reply = try await client.json(method, path, body, headers: idempotency("k"), key: nil)
                    Self.expectUnauthorized(reply, tokenGiven: false, "\(method) \(path)")
                }
                // Webhooks carry no key: the adapter's verification decides (a forged one is its 401).
                let webhook = try await client.json(.post, "/v1/webhooks/mock", #"{"eventId":"e","providerReference":"r"}"#,
                                                    headers: [HTTPField.Name("X-Mock-Signature")!: "00"], key: nil)
                #expect(webhook.status == 401 && webhook.problemCode == "webhook_unverified", "\(webhook.text)")
                #expect(webhook.headers[.wwwAuthenticate]?.hasPrefix("Signature") == true, "a 401 always has a challenge")
                // Operations routes need no key.
                #expect(try await client.json(.get, "/healthz", key: nil).status == 200)
            }
        }
    }

    @Test func wrongMalformedAndUnknownKeysAre401InvalidTokenNamingNoSecret() async throws {
        try await APIFixture.with { fixture in
            let unknown = "gk_test_" + String(repeating: "a", count: 32)
            try await fixture.app().test(.router) { client in
                let given: [(String, String)] = [
                    ("an unknown key", "Bearer \(unknown)"),
                    ("a key of the wrong mode prefix", "Bearer gk_live_0123456789abcdefghjkmnpqrstvwxyz"),
                    ("a key too short", "Bearer gk_test_0123"),
                    ("a key with a character outside its alphabet", "Bearer gk_test_0123456789abcdefghjkmnpqrstvwxyu"),
                    ("something else", "Bearer hello-world"),
                    ("the key in the wrong case", "Bearer " + APIFixture.testKey.uppercased()),
                    ("the key with a trailing extra", "Bearer \(APIFixture.testKey)x"),
                ]
                for (what, field) in given {
                    let reply = try await client.json(.get, "/v1/providers", headers: [.authorization: field])
                    Self.expectUnauthorized(reply, tokenGiven: true, what)
                    #expect(!reply.text.contains(field.dropFirst(7)), "\(what): the problem repeats the token")
                }
                for (what, field) in [("another scheme", "Basic dXNlcjpwYXNz"), ("Bearer and nothing", "Bearer "), ("the key alone", APIFixture.testKey)] {
                    Self.expectUnauthorized(try await client.json(.get, "/v1/providers", headers: [.authorization: field]), tokenGiven: false, what)
                }
                // The scheme is case-insensitive (RFC 9110), and spaces after it are allowed.
                #expect(try await client.json(.get, "/v1/providers", headers: [.authorization: "bearer   \(APIFixture.testKey)"]).status == 200)
            }
        }
    }

    @Test func aKeyRevokedThroughTheServersKeysIsRefusedOnTheNextRequest() async throws {
        try await APIFixture.with { fixture in
            let issued = try await fixture.keys.issue(mode: .test, name: "to revoke")
            try await fixture.app().test(.router) { client in
                #expect(try await client.json(.post, "/v1/sessions", newSession, key: issued.secret).status == 201)
                // Verified once: now in the server's cache.
                #expect(try await client.json(.get, "/v1/providers", key: issued.secret).status == 200)
                let revoked = try #require(try await fixture.keys.revoke(id: issued.record.id))
                #expect(revoked.isRevoked)
                let refused = try await client.json(.post, "/v1/sessions", newSession, key: issued.secret)
                Self.expectUnauthorized(refused, tokenGiven: true, "a revoked key")
                #expect((refused["detail"] as? String)?.contains("revoked") == true)
                // Other keys go on working.
                #expect(try await client.json(.post, "/v1/sessions", newSession).status == 201)
            }
        }
    }

    /// What `gateway keys revoke` does from another process: the store alone.
    /// A server that asks the store on every request (no cache) refuses the
    /// key on the next one; with the default cache, within a second.
    @Test func aKeyRevokedInTheStoreByAnotherProcessIsRefused() async throws {
        try await APIFixture.with(keyCache: .zero) { fixture in
            let issued = try await fixture.keys.issue(mode: .live)
            try await fixture.app().test(.router) { client in
                #expect(try await client.json(.get, "/v1/providers", key: issued.secret).status == 200)
                // A synced write to the database, as the other process makes it: off the concurrency pool.
                let store = fixture.store, id = issued.record.id
                try await offThePool { () throws -> Void in _ = try store.revokeAPIKey(id: id, at: Date()) }
                Self.expectUnauthorized(try await client.json(.get, "/v1/providers", key: issued.secret), tokenGiven: true, "revoked in the store")
            }
        }
    }

    @Test func aTestKeyCannotSeeOrTouchALiveSessionOrPayment() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let live = try await client.json(.post, "/v1/sessions", newSession, key: APIFixture.liveKey)
                #expect(live.status == 201 && live.string("mode") == "live")
                let liveID = try #require(live.string("id"))
                #expect(try await client.json(.get, "/v1/sessions/\(liveID)", key: APIFixture.liveKey).status == 200)
                let unseen = try await client.json(.get, "/v1/sessions/\(liveID)", key: APIFixture.testKey)
                #expect(unseen.status == 404 && unseen.problemCode == "not_found", "a test key reads a live session: \(unseen.text)")
                #expect(try await client.json(.post, "/v1/sessions/\(liveID)/attempts", #"{"method":"mada"}"#).status == 404)
                #expect(try await client.json(.post, "/v1/sessions/\(liveID)/abort").status == 404)
                #expect(try await client.json(.get, "/v1/sessions/\(liveID)/events").status == 404)

                // A test payment, through the (test) mock: a live key cannot see or move it.
                let test = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-2","capture":"manual"}"#)
                #expect(test.string("mode") == "test")
                let testID = try #require(test.string("id"))
                let attempt = try await client.json(.post, "/v1/sessions/\(testID)/attempts", #"{"method":"mada"}"#)
                #expect(attempt.string("status") == "authorized", "\(attempt.text)")
                let payment = try #require(attempt.string("id"))
                for (path, body) in [("capture", "{}"), ("refund", "{}"), ("void", nil), ("verify", nil)] as [(String, String?)] {
                    let reply = try await client.json(.post, "/v1/payments/\(payment)/\(path)", body, headers: idempotency("live-\(path)"), key: APIFixture.liveKey)
                    #expect(reply.status == 404 && reply.problemCode == "not_found", "a live key may \(path) a test payment: \(reply.text)")
                }
                #expect(try await client.json(.get, "/v1/sessions/\(testID)", key: APIFixture.liveKey).status == 404)
                // The test key still can.
                let captured = try await client.json(.post, "/v1/payments/\(payment)/capture", "{}", headers: idempotency("c-1"))
                #expect(captured.status == 200, "\(captured.text)")
            }
        }
    }

    @Test func idempotencyKeysDoNotCollideAcrossModes() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let test = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("order-7"))
                // Another body under the same Idempotency-Key, in the other mode: a new session, not a conflict.
                let live = try await client.json(.post, "/v1/sessions", newSession.replacingOccurrences(of: "2500", with: "2600"),
                                                 headers: idempotency("order-7"), key: APIFixture.liveKey)
                #expect(test.status == 201 && live.status == 201, "\(live.text)")
                #expect(test.string("id") != live.string("id"))
                #expect(live.string("mode") == "live" && test.string("mode") == "test")
                // Within each mode the key still replays and conflicts.
                let replay = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("order-7"))
                #expect(replay.string("id") == test.string("id"))
                let liveReplay = try await client.json(.post, "/v1/sessions", newSession.replacingOccurrences(of: "2500", with: "2600"),
                                                       headers: idempotency("order-7"), key: APIFixture.liveKey)
                #expect(liveReplay.string("id") == live.string("id"))
                let conflict = try await client.json(.post, "/v1/sessions", newSession.replacingOccurrences(of: "2500", with: "2600"), headers: idempotency("order-7"))
                #expect(conflict.status == 409 && conflict.problemCode == "idempotency_conflict")
            }
        }
    }

    @Test func theAdminAPIsRefusalCarriesItsOwnChallenge() async throws {
        try await APIFixture.with(adminToken: APIFixture.adminToken) { fixture in
            try await fixture.app().test(.router) { client in
                let none = try await client.json(.post, "/admin/reload", key: nil)
                #expect(none.status == 401 && none.headers[.wwwAuthenticate] == #"Bearer realm="gateway-admin""#)
                let wrong = try await client.json(.post, "/admin/reload", headers: [.authorization: "Bearer wrong-token-wrong-token"])
                #expect(wrong.status == 401 && wrong.headers[.wwwAuthenticate] == #"Bearer realm="gateway-admin", error="invalid_token""#)
                // An API key is no admin token.
                #expect(try await client.json(.post, "/admin/reload").status == 401)
            }
        }
    }

    /// With a webhook port, the second listener serves the providers'
    /// webhooks and nothing else, and the main one no longer serves them.
    @Test(.heavy) func theWebhookListenerServesWebhooksOnly() async throws {
        try await APIFixture.with { fixture in
            try await LiveServer.with(fixture, withWebhookListener: true) { server in
                let webhooks = try #require(server.webhookPort)
                #expect(webhooks != server.port)
                let forged = try await server.request("POST", "/v1/webhooks/mock", #"{"eventId":"e","providerReference":"r"}"#, key: nil,
                                                      port: webhooks, headers: ["X-Mock-Signature": "00"])
                #expect(forged.status == 401 && forged.json["code"] as? String == "webhook_unverified", "the adapter saw it: \(forged.json)")
                for (method, path) in [("POST", "/v1/sessions"), ("GET", "/v1/sessions/ses_x"), ("GET", "/v1/providers"), ("GET", "/healthz"), ("GET", "/metrics")] {
                    let reply = try await server.request(method, path, method == "POST" ? newSession : nil, port: webhooks)
                    #expect(reply.status == 404, "the webhook listener serves \(method) \(path): \(reply.status)")
                }
                // The main listener: the API, and no webhooks.
                #expect(try await server.request("POST", "/v1/sessions", newSession).status == 201)
                let moved = try await server.request("POST", "/v1/webhooks/mock", #"{"eventId":"e","providerReference":"r"}"#, key: nil,
                                                     headers: ["X-Mock-Signature": "00"])
                #expect(moved.status == 404, "the main listener still serves webhooks: \(moved.status)")
            }
        }
    }

    /// Keys, good and bad, sent as a server runs: none reaches a log line.
    @Test(.heavy) func noKeyEverReachesTheLogs() async throws {
        try await APIFixture.with { fixture in
            let wrong = "gk_live_" + String(repeating: "7", count: 32)
            try await LiveServer.with(fixture) { server in
                #expect(try await server.request("POST", "/v1/sessions", newSession).status == 201)
                #expect(try await server.request("GET", "/v1/providers", key: wrong).status == 401)
                #expect(try await server.request("GET", "/v1/providers", key: "not-a-key-\(wrong)").status == 401)
                // A key pasted into a path by mistake.
                _ = try await server.request("GET", "/v1/sessions/\(APIFixture.liveKey)")
                _ = try await server.request("GET", "/v1/nothing/\(wrong)", key: nil)
            }
            let logs = fixture.logs.all.joined(separator: "\n")
            #expect(logs.contains("/v1/sessions"), "the requests were logged")
            for secret in [APIFixture.testKey, APIFixture.liveKey, wrong] {
                #expect(!logs.contains(String(secret.dropFirst(8))), "a key reached the logs")
            }
        }
    }
}
