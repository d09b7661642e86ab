import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PostgresCheckoutStore
import Synchronization
import Testing
import TestSupport

/// Two embedded `PaymentGateway`s (two hosts: each its own adapters, engine
/// and pool) on one PostgreSQL database, paying through the shipped mock.
/// Each gateway loads its own mock instance; where one must verify what the
/// other paid, both mocks keep their books in one file (`config.ledger_folder`),
/// as two hosts pay one provider.
@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"), .heavy)
struct TwoGatewaysTests {
    struct Hosts {
        let gateways: [PaymentGateway]
        let stores: [PostgresCheckoutStore]
        /// The adapter calls both hosts made, by operation.
        let calls: Calls

        final class Calls: Sendable {
            let made = Mutex<[String]>([])
        }

        /// - Parameters:
        ///   - sharedBooks: both mocks keep one ledger (one provider for both hosts).
        ///   - reconcileBackoff: when a pending attempt is due for its next check.
        static func start(sharedBooks: Bool = false, reconcileBackoff: [TimeInterval]? = nil) async throws -> Hosts {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("two-gateways-\(UUID().uuidString)")
            let manifests = folder.appendingPathComponent("manifests")
            try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
            let mock = manifests.appendingPathComponent("mock.json")
            try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"), to: mock)
            if sharedBooks {
                let books = folder.appendingPathComponent("books").path
                try ManifestText.edit(mock, [(#""config": \{"#, #""config": { "ledger_folder": "\#(books)","#)])
            }
            let schema = TestPostgres.newSchema()
            var gateways: [PaymentGateway] = [], stores: [PostgresCheckoutStore] = []
            let calls = Calls()
            for host in 0..<2 {
                let data = folder.appendingPathComponent("data-\(host)")
                if host > 0 {
                    // Hosts on one database share the fingerprint key (docs/postgresql.md).
                    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
                    try FileManager.default.copyItem(at: folder.appendingPathComponent("data-0/idempotency.key"), to: data.appendingPathComponent("idempotency.key"))
                }
                let store = try await TestPostgres.store(schema: schema)
                var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: data.path)
                configuration.store = store
                configuration.libraries = BuildProducts.sharedLibraryStore
                configuration.reconcileInterval = .seconds(3600)
                if let reconcileBackoff { configuration.checkout.reconcileBackoff = reconcileBackoff }
                configuration.callObserver = { call in calls.made.withLock { $0.append(call.operation) } }
                gateways.append(try await PaymentGateway.open(configuration: configuration))
                stores.append(store)
            }
            return Hosts(gateways: gateways, stores: stores, calls: calls)
        }

        func stop() async {
            for gateway in gateways { await gateway.shutdown() }
            for store in stores { await store.close() }
        }

        func count(_ operation: String) -> Int { calls.made.withLock { $0.filter { $0 == operation }.count } }

        func session() async throws -> SessionSnapshot {
            try await gateways[0].createSession(NewSession(amount: Money(value: 2500, currency: "SAR"), country: "SA", orderId: "o-\(UUID().uuidString.prefix(8))"))
        }
    }

    /// Attempts on one session from both gateways at once, each under its own
    /// key, the mock leaving each pending (3-D Secure): one attempt is made,
    /// one authorize sent; every other try is refused before any provider.
    @Test func concurrentAttemptsFromTwoGatewaysLeaveAtMostOneLive() async throws {
        let hosts = try await Hosts.start()
        let session = try await hosts.session()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for i in 0..<20 {
                group.addTask {
                    do {
                        return try await hosts.gateways[i % 2].attempt(session: session.session.id, NewAttempt(
                            method: "visa", provider: "mock", instrument: ["scenario": .string("three_ds")]), idempotencyKey: "try-\(i)").status.rawValue
                    } catch {
                        return error.code
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        let stored = try #require(try await hosts.stores[1].session(session.session.id))
        #expect(stored.attempts.count == 1 && stored.attempts.filter { !$0.status.isFinal }.count == 1, "\(stored.attempts.map(\.status))")
        #expect(outcomes.filter { $0 == "pending" }.count == 1 && outcomes.filter { $0 != "pending" }.allSatisfy { $0 == "invalid_state" }, "\(outcomes)")
        #expect(hosts.count("authorize") == 1)
        await hosts.stop()
    }
}

extension TwoGatewaysTests {
    /// Thirty attempts left pending (the mock decides later), due for a check
    /// at once, both gateways reconciling at the same time, several passes
    /// each: every attempt is verified once, by one of them. (Thirty verify
    /// calls in all and thirty attempts settled: a check run twice would
    /// leave another never run, still pending.)
    @Test func eachDueCheckRunsOnExactlyOneGateway() async throws {
        let hosts = try await Hosts.start(sharedBooks: true, reconcileBackoff: [0])
        var sessions: [String] = []
        for i in 0..<30 {
            let session = try await hosts.session()
            let attempt = try await hosts.gateways[i % 2].attempt(session: session.session.id, NewAttempt(
                method: "visa", provider: "mock", instrument: ["scenario": .string("pending_then_success")]), idempotencyKey: "pay-\(i)")
            #expect(attempt.status == .pending)
            sessions.append(session.session.id)
        }
        let passes = await withTaskGroup(of: (verified: Int, failed: Int).self) { group in
            for gateway in hosts.gateways {
                group.addTask {
                    var total = (verified: 0, failed: 0)
                    for _ in 0..<4 {
                        let pass = await gateway.reconcile()
                        total.verified += pass.verified
                        total.failed += pass.failed
                    }
                    return total
                }
            }
            return await group.reduce(into: [(verified: Int, failed: Int)]()) { $0.append($1) }
        }
        #expect(hosts.count("verify") == 30, "\(hosts.count("verify")) checks for 30 attempts")
        #expect(passes.map(\.verified).reduce(0, +) == 30 && passes.allSatisfy { $0.failed == 0 }, "\(passes)")
        for id in sessions {
            let stored = try #require(try await hosts.stores[1].session(id))
            #expect(stored.attempts.count == 1 && stored.attempts[0].status == .succeeded, "\(id): \(stored.attempts.map(\.status))")
        }
        await hosts.stop()
    }
}

private extension Error {
    var code: String { (self as? Problem)?.code.rawValue ?? "\(self)" }
}
