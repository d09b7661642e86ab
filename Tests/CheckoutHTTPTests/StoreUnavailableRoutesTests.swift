import CheckoutEngine
import CheckoutHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport

/// What the API tells callers, some of them not authenticated, when the
/// store is unavailable: a `503` that says so and when to retry, never where
/// the database is or what it said; that is logged, once, at warning.
@Suite struct StoreUnavailableRoutesTests {
    @Test func anUnavailableStoreIsAnsweredWithoutItsReasonAndTheReasonIsLoggedOnce() async throws {
        var inFront: UnavailableStore?
        try await APIFixture.with(keyCache: .zero, storeInFront: { store in
            let faulty = UnavailableStore(store)
            inFront = faulty
            return faulty
        }) { fixture in
            let store = try #require(inFront)
            let everything = Set(UnavailableStore.Method.allCases)
            try await fixture.app().test(.router) { client in
                #expect(try await client.json(.get, "/readyz", key: nil).status == 200)
                // Where each kind of answer is made: the readiness probe, an API
                // key's lookup (ProblemMiddleware), a call the engine answers.
                let cases: [(String, Set<UnavailableStore.Method>, HTTPRequest.Method, String, String?)] = [
                    ("/readyz", everything, .get, "/readyz", nil),
                    ("an API key's lookup", everything, .get, "/v1/sessions/ses_x", nil),
                    ("a call the engine answers", everything.subtracting([.apiKey]), .post, "/v1/sessions", newSession),
                ]
                for (what, failing, method, path, body) in cases {
                    store.fail(failing)
                    let logged = fixture.logs.all.count
                    let reply = try await client.json(method, path, body, headers: idempotency("k-\(what.count)"))
                    #expect(reply.status == 503 && reply.problemCode == "store_unavailable" && reply["retryable"] as? Bool == true,
                            "\(what): \(reply.status) \(reply.text)")
                    #expect(reply.headers[.retryAfter] == "2", "\(what)")
                    let detail = reply.string("detail") ?? ""
                    #expect(detail.hasPrefix("the payment store is unavailable; retry after 2 seconds"), "\(what): \(detail)")
                    #expect(!reply.text.contains("db.internal") && !reply.text.contains("connection refused") && !reply.text.contains("secret_schema"),
                            "\(what) tells where the store is: \(reply.text)")
                    let lines = fixture.logs.all.dropFirst(logged).filter { $0.contains(store.reason) }
                    #expect(lines.count == 1 && lines.allSatisfy { $0.hasPrefix("warning") }, "\(what) logged \(lines)")
                }
                store.recover()
                #expect(try await client.json(.get, "/readyz", key: nil).status == 200)
            }
        }
    }
}
