import CheckoutEngine
import CheckoutHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing

/// Every route's success and failure paths, in process (HummingbirdTesting's router client).
@Suite struct CheckoutRoutesTests {
    @Test func aWholePaymentSessionAttemptCaptureRefund() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let created = try await client.json(.post, "/v1/sessions",
                                                    #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-1","capture":"manual"}"#)
                #expect(created.status == 201)
                let id = try #require(created.string("id"))
                #expect((created["availableMethods"] as? [String])?.contains("mada") == true)
                #expect((created["amount"] as? [String: Any])?["value"] as? Int == 2500)

                let read = try await client.json(.get, "/v1/sessions/\(id)")
                #expect(read.status == 200 && read.string("orderId") == "o-1")

                let attempt = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada"}"#)
                #expect(attempt.status == 201 && attempt.string("status") == "authorized" && attempt.string("providerId") == "mock")
                let payment = try #require(attempt.string("id"))

                let capture = try await client.json(.post, "/v1/payments/\(payment)/capture", #"{"amount":2000}"#, headers: idempotency("c-1"))
                #expect(capture.status == 200)
                #expect((capture["balance"] as? [String: Any])?["captured"] as? Int == 2000)
                let refund = try await client.json(.post, "/v1/payments/\(payment)/refund", #"{"amount":500}"#, headers: idempotency("r-1"))
                #expect((refund["balance"] as? [String: Any])?["refunded"] as? Int == 500)
                let beyond = try await client.json(.post, "/v1/payments/\(payment)/refund", #"{"amount":1501}"#, headers: idempotency("r-2"))
                #expect(beyond.status == 422 && beyond.problemCode == "invalid_request")
                let noKey = try await client.json(.post, "/v1/payments/\(payment)/refund", #"{"amount":1}"#)
                #expect(noKey.isProblem && noKey.status >= 400 && noKey.status < 500)

                // The payment as recorded: its balance, nothing held; another mode's key does not see it.
                let recorded = try await client.json(.get, "/v1/payments/\(payment)")
                #expect(recorded.status == 200 && recorded.string("id") == payment && recorded.string("status") == "authorized")
                let balance = try #require(recorded["balance"] as? [String: Any])
                #expect(balance["captured"] as? Int == 2000 && balance["refunded"] as? Int == 500)
                #expect((balance["inFlight"] as? [String: Any])?.isEmpty == true)
                #expect((balance["captures"] as? [[String: Any]])?.map { $0["amount"] as? Int } == [2000])
                #expect(try await client.json(.get, "/v1/payments/\(payment)", key: APIFixture.liveKey).status == 404)
                #expect(try await client.json(.get, "/v1/payments/att_nope").status == 404)

                let verify = try await client.json(.post, "/v1/payments/\(payment)/verify")
                #expect(verify.status == 200 && verify.string("status") == "authorized")
                let void = try await client.json(.post, "/v1/payments/\(payment)/void", nil, headers: idempotency("v-1"))
                #expect(void.status == 409 && void.problemCode == "invalid_state", "a captured payment cannot be voided")

                let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                #expect(metrics.contains(#"checkout_attempts_total{provider="mock",outcome="authorized"} 1"#))
                #expect(metrics.contains(#"adapter_calls_total{provider="mock",version="1.0.0",operation="capture",outcome="succeeded"} 1"#))
                #expect(metrics.contains(#"http_requests_total{route="/v1/sessions",method="POST",status="201"} 1"#))
                #expect(metrics.contains(#"provider_circuit_state{provider="mock"} 0"#))
                #expect(metrics.contains(#"adapter_blocked_calls{provider="mock"} 0"#), "an adapter whose cancels never block")
                #expect(metrics.contains("adapter_call_duration_seconds_bucket"))
            }
        }
    }

    @Test func aPayerActionThenContinueAndAnAbort() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let id = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                let pending = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"visa","provider":"mock","instrument":{"scenario":"three_ds"}}"#)
                #expect(pending.string("status") == "pending")
                #expect((pending["action"] as? [String: Any])?["type"] as? String == "three_ds")
                let attemptID = try #require(pending.string("id"))
                let busy = try await client.json(.post, "/v1/sessions/\(id)/abort")
                #expect(busy.status == 409 && busy.problemCode == "invalid_state", "no abort while an attempt is live")
                let done = try await client.json(.post, "/v1/sessions/\(id)/attempts/\(attemptID)/continue", #"{"returnParams":{"outcome":"approve"}}"#)
                #expect(done.status == 200 && done.string("status") == "succeeded")

                let other = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                let aborted = try await client.json(.post, "/v1/sessions/\(other)/abort")
                #expect(aborted.status == 200 && aborted.string("status") == "cancelled")
                #expect((aborted["availableMethods"] as? [String]) == [])
                let declined = try await client.json(.post, "/v1/sessions/\(try #require(try await client.json(.post, "/v1/sessions", newSession).string("id")))/attempts",
                                                     #"{"method":"mada","instrument":{"scenario":"card_declined"}}"#)
                #expect(declined.status == 201 && declined.string("status") == "failed")
                let problem = try #require(declined["problem"] as? [String: Any])
                #expect(problem["code"] as? String == "card_declined" && problem["retryable"] as? Bool == false)
                #expect((problem["payerMessage"] as? [String: String])?["ar"]?.isEmpty == false)
            }
        }
    }

    @Test func idempotentReplayAndConflictOverHTTP() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let first = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("k-1"))
                let again = try await client.json(.post, "/v1/sessions", newSession, headers: idempotency("k-1"))
                #expect(first.status == 201 && again.status == 201)
                #expect(first.string("id") == again.string("id"))
                let other = try await client.json(.post, "/v1/sessions", newSession.replacingOccurrences(of: "2500", with: "2600"), headers: idempotency("k-1"))
                #expect(other.status == 409 && other.problemCode == "idempotency_conflict")

                let id = try #require(first.string("id"))
                let attempt = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada"}"#, headers: idempotency("a-1"))
                let replay = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada"}"#, headers: idempotency("a-1"))
                #expect(attempt.string("id") == replay.string("id") && replay.string("status") == "succeeded")
                let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                #expect(metrics.contains(#"adapter_calls_total{provider="mock",version="1.0.0",operation="authorize",outcome="succeeded"} 1"#), "one adapter call for two requests")
            }
        }
    }

    /// Bad input is a clear 4xx problem naming what was wrong, never a 500.
    @Test func badRequestsAreProblemsThatSayWhatWasWrong() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                func expect(_ reply: Reply, _ status: Int, _ code: String, mentions: String, _ location: SourceLocation = #_sourceLocation) {
                    #expect(reply.status == status, "\(reply.text)", sourceLocation: location)
                    #expect(reply.problemCode == code, "\(reply.text)", sourceLocation: location)
                    #expect((reply.object["detail"] as? String)?.contains(mentions) == true, "\(reply.text)", sourceLocation: location)
                }
                expect(try await client.json(.post, "/v1/sessions", #"{"amount": 25"#), 400, "malformed_request", mentions: "not valid JSON")
                expect(try await client.json(.post, "/v1/sessions", "[1,2]"), 400, "malformed_request", mentions: "JSON object")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":"2500","currency":"SAR","country":"SA","orderId":"o"}"#), 400, "malformed_request", mentions: "amount must be an integer")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":25.5,"currency":"SAR","country":"SA","orderId":"o"}"#), 400, "malformed_request", mentions: "amount")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA"}"#), 400, "malformed_request", mentions: "orderId is required")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o","amuont":1}"#), 400, "malformed_request", mentions: "\"amuont\"")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"XYZ","country":"SA","orderId":"o"}"#), 422, "invalid_request", mentions: "XYZ")
                expect(try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"sa","orderId":"o"}"#), 422, "invalid_request", mentions: "country")
                expect(try await client.json(.post, "/v1/sessions", newSession, contentType: "text/plain"), 415, "unsupported_media_type", mentions: "text/plain")
                for notJSON in ["application/jsonx", "application/xml", "application/", "text/json", "json", "application/json+xml"] {
                    expect(try await client.json(.post, "/v1/sessions", newSession, contentType: notJSON), 415, "unsupported_media_type", mentions: notJSON)
                }
                for json in ["application/json", " Application/JSON ; charset=utf-8", "application/merge-patch+json", "APPLICATION/VND.API+JSON\t"] {
                    #expect(try await client.json(.post, "/v1/sessions", newSession, contentType: json).status == 201, "\(json)")
                }
                expect(try await client.json(.post, "/v1/sessions", "{\"orderId\":\"" + String(repeating: "x", count: 70_000) + "\"}"), 413, "payload_too_large", mentions: "limit")
                expect(try await client.json(.get, "/v1/sessions/ses_nope"), 404, "not_found", mentions: "ses_nope")
                expect(try await client.json(.post, "/v1/sessions/ses_nope/attempts", #"{"method":"mada"}"#), 404, "not_found", mentions: "ses_nope")
                expect(try await client.json(.post, "/v1/payments/att_nope/capture", "{}", headers: idempotency("x")), 404, "not_found", mentions: "att_nope")
                expect(try await client.json(.get, "/v1/nothing-here"), 404, "not_found", mentions: "/v1/nothing-here")
                let id = try #require(try await client.json(.post, "/v1/sessions", newSession).string("id"))
                expect(try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":7}"#), 400, "malformed_request", mentions: "method must be a string")
                expect(try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"ideal"}"#), 422, "method_unavailable", mentions: "ideal")
                // The adapter refuses the instrument: the attempt is recorded as failed with invalid_request.
                let refused = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada","instrument":{"scenario":"no_such"}}"#)
                #expect(refused.status == 201 && refused.string("status") == "failed")
                #expect((refused["problem"] as? [String: Any])?["code"] as? String == "invalid_request")
            }
        }
    }

    @Test func providersAndWebhooks() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let providers = try await client.json(.get, "/v1/providers")
                let list = try #require(providers.json as? [[String: Any]])
                let mock = try #require(list.first { $0["id"] as? String == "mock" })
                #expect(mock["state"] as? String == "loaded" && mock["circuit"] as? String == "closed" && mock["enabled"] as? Bool == true)
                #expect((mock["methods"] as? [String])?.contains("mada") == true)
                // Each provider's mode: the mock is test; the shipped providers (disabled) are live.
                #expect(mock["mode"] as? String == "test")
                #expect(list.first { $0["id"] as? String == "hyperpay" }?["mode"] as? String == "live")

                let forged = try await client.json(.post, "/v1/webhooks/mock", #"{"eventId":"e","providerReference":"r"}"#,
                                                   headers: [HTTPField.Name("X-Mock-Signature")!: "00"])
                #expect(forged.status == 401 && forged.problemCode == "webhook_unverified")
                let unknown = try await client.json(.post, "/v1/webhooks/nobody", "{}")
                #expect(unknown.isProblem && unknown.status >= 400 && unknown.status < 600 && unknown.status != 500)
                #expect(try await client.json(.get, "/healthz").status == 200)
                #expect(try await client.json(.get, "/readyz").status == 200)
            }
        }
    }

    /// Each provider shows the SHA-256 of its manifest file's bytes, and the
    /// response the host's digest of them all (`X-Manifests-Digest`): an edit
    /// applied by a reload changes that provider's digest and the host's, and
    /// a host over a copy of the same manifests (one file renamed, so loaded
    /// in another order) reports the same host digest until it lags behind.
    @Test func providersShowEachManifestsDigestAndTheHostsDigest() async throws {
        try await APIFixture.with { fixture in
            try await APIFixture.with(editManifests: { manifests in
                try FileManager.default.moveItem(at: manifests.appendingPathComponent("example-c.json"),
                                                 to: manifests.appendingPathComponent("zz-example-c.json"))
            }) { twin in
                try await fixture.app().test(.router) { client in
                    let header = HTTPField.Name("X-Manifests-Digest")!
                    /// Each provider's `manifestSha256`, by manifest file name.
                    func digests(_ reply: Reply) throws -> [String: String] {
                        var digests: [String: String] = [:]
                        for provider in try #require(reply.json as? [[String: Any]]) {
                            let file = try #require(provider["manifest"] as? String)
                            digests[file] = try #require(provider["manifestSha256"] as? String, "\(file) has no manifestSha256")
                        }
                        return digests
                    }
                    func fileDigest(_ name: String) throws -> String {
                        LibraryStore.sha256Hex(try Data(contentsOf: fixture.manifests.appendingPathComponent(name)))
                    }
                    let before = try await client.json(.get, "/v1/providers")
                    let shown = try digests(before)
                    let files = try ManifestFile.list(in: fixture.manifests).map(\.lastPathComponent)
                    #expect(shown.keys.sorted() == files)
                    for (file, digest) in shown {
                        let expected = try fileDigest(file)
                        #expect(digest == expected, "\(file)")
                    }
                    let host = try #require(before.headers[header])
                    #expect(host.count == 64 && host.allSatisfy { "0123456789abcdef".contains($0) })
                    #expect(host == fixture.gateway.manifestsDigest)
                    // The same manifests, loaded in another order on another host: the same digest.
                    #expect(twin.gateway.providerRecords.compactMap(\.id) != fixture.gateway.providerRecords.compactMap(\.id))
                    #expect(twin.gateway.manifestsDigest == host)

                    // An edit applied: that provider's digest and the host's change, the others' do not.
                    let url = fixture.manifests.appendingPathComponent("mock.json")
                    let text = try String(contentsOf: url, encoding: .utf8)
                    let edited = text.replacingOccurrences(of: "\"priority\": 1000", with: "\"priority\": 900")
                    try #require(edited != text)
                    try Data(edited.utf8).write(to: url, options: .atomic)
                    #expect(try await fixture.gateway.manifests.reload().applied == ["mock.json"])
                    let after = try await client.json(.get, "/v1/providers")
                    let now = try digests(after)
                    let editedDigest = try fileDigest("mock.json")
                    #expect(now["mock.json"] == editedDigest && editedDigest != shown["mock.json"])
                    #expect(now.filter { $0.key != "mock.json" } == shown.filter { $0.key != "mock.json" })
                    let changed = try #require(after.headers[header])
                    #expect(changed != host && changed == fixture.gateway.manifestsDigest)
                    // The twin has not applied the edit: its digest shows it lags.
                    #expect(twin.gateway.manifestsDigest == host)
                }
            }
        }
    }

    @Test func withoutATokenTheAdminRoutesDoNotExist() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let reload = try await client.json(.post, "/admin/reload")
                #expect(reload.status == 404 && reload.isProblem)
            }
        }
    }

    @Test func adminNeedsTheBearerTokenAndDisablingRewritesTheManifest() async throws {
        try await APIFixture.with(adminToken: APIFixture.adminToken) { fixture in
            try await fixture.app().test(.router) { client in
                #expect(try await client.json(.post, "/admin/reload").status == 401)
                #expect(try await client.json(.post, "/admin/reload", headers: [.authorization: "Bearer wrong-token-wrong-token"]).status == 401)
                let auth: HTTPFields = [.authorization: "Bearer \(APIFixture.adminToken)"]
                #expect(try await client.json(.post, "/admin/reload", headers: auth).status == 200)
                let disabled = try await client.json(.post, "/admin/providers/mock/disable", headers: auth)
                #expect(disabled.status == 200 && disabled["applied"] as? [String] == ["mock.json"])
                let text = try String(contentsOf: fixture.manifests.appendingPathComponent("mock.json"), encoding: .utf8)
                #expect(text.contains("\"enabled\": false"))
                let session = try await client.json(.post, "/v1/sessions", newSession)
                #expect(session["availableMethods"] as? [String] == ["visa"], "only example-c is left")
                #expect(try await client.json(.post, "/admin/providers/nobody/enable", headers: auth).status == 404)
                #expect(try await client.json(.post, "/admin/providers/mock/enable", headers: auth).status == 200)
                #expect((try await client.json(.post, "/v1/sessions", newSession)["availableMethods"] as? [String])?.contains("mada") == true)
            }
        }
    }
}
