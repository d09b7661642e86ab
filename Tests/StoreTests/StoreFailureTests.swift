import CheckoutEngine
import Foundation
import GatewayPayloads
import Testing
import TestSupport

/// A store that fails for a reason of its own (a statement refused, not the
/// database gone): the host's log says why, in the database's own words,
/// and the caller's problem says nothing of it.
@Suite struct StoreFailureTests {
    @Test(arguments: StoreKind.available)
    func aStoreFailureIsLoggedWithTheDatabasesReasonAndNotShownToTheCaller(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            switch kind {
            case .postgres:
                try await kind.raw("""
                    CREATE FUNCTION refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'events refused by a test trigger' USING ERRCODE = 'XX999'; END $$
                    """, on: store)
                try await kind.raw("CREATE TRIGGER refuse_events BEFORE INSERT ON event FOR EACH ROW EXECUTE FUNCTION refuse_events()", on: store)
            case .sqliteMemory, .sqliteFile:
                try await kind.raw("CREATE TRIGGER refuse_events BEFORE INSERT ON event BEGIN SELECT RAISE(ABORT, 'events refused by a test trigger'); END",
                                   on: store)
            }
            let logs = CapturedLogs()
            let provider = ScriptedProvider("a") { call in .answered(ScriptedProvider.success(call)) }
            let checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider as any PaymentProvider)]),
                                    fingerprintKey: testKey, logger: logs.logger("checkout"))
            let thrown = await #expect(throws: Problem.self) {
                try await checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"))
            }
            let problem = try #require(thrown)
            #expect(problem.retryable, "\(problem)")
            for shown in ["refused by a test trigger", "SQL", "INSERT", "event"] {
                #expect(!problem.detail.contains(shown), "the caller was shown \(shown): \(problem.detail)")
            }
            let logged = logs.all.filter { $0.contains("store failure") }
            #expect(logged.count == 1 && logged.allSatisfy { $0.contains("events refused by a test trigger") }, "\(logs.all)")
            if kind == .postgres {
                #expect(logged.allSatisfy { $0.contains("SQLSTATE XX999") && !$0.contains("Generic description") }, "\(logged)")
            }
        }
    }
}
