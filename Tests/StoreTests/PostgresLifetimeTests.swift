import CheckoutEngine
import PostgresCheckoutStore
import ServiceLifecycleTestKit
import TestSupport
import Testing

/// The PostgreSQL store's pool lives as long as the store, not as long as
/// whatever task happened to open it. A pool opened (at start, or again
/// after the database came back) from a task inside a service, such as an
/// HTTP request's, would otherwise inherit that service's graceful
/// shutdown: the pool closed as the server began to stop, and the requests
/// still in flight (which graceful shutdown lets finish) lost their store.
@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"))
struct PostgresLifetimeTests {
    @Test func aPoolOpenedInsideAServiceOutlivesThatServicesGracefulShutdown() async throws {
        try await testGracefulShutdown { trigger in
            let store = try await TestPostgres.store()
            #expect(try await store.session("ses_none") == nil)
            trigger.triggerGracefulShutdown()
            // What a request still in flight does next: the store answers.
            await #expect(throws: Never.self) { try await store.session("ses_none") }
            #expect(store.isAvailable)
            await store.close()
        }
    }
}
