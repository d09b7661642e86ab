import CheckoutEngine
import Foundation
import GatewayPayloads
import PostgresNIO
@testable import PostgresCheckoutStore
import Synchronization
import TestSupport
import Testing

/// Two engines (two hosts: each its own store value, pool and caches) on one
/// PostgreSQL database, calling one provider: the engine's guarantees hold
/// across them because the database enforces them.
@Suite(.enabled(if: TestPostgres.isAvailable, "a PostgreSQL test cluster (scripts/test-postgres run swift test)"), .heavy)
struct ManyHostsTests {
    /// Two hosts on one new schema, sharing `clock` and `provider`.
    struct Hosts {
        let stores: [PostgresCheckoutStore]
        let engines: [Checkout]

        static func start(_ provider: ScriptedProvider, clock: TestClock) async throws -> Hosts {
            let schema = TestPostgres.newSchema()
            var stores: [PostgresCheckoutStore] = []
            for _ in 0..<2 { stores.append(try await TestPostgres.store(schema: schema)) }
            var configuration = CheckoutConfiguration()
            configuration.reconcileBackoff = [1, 2, 4]
            let engines = stores.map { store in
                Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider as any PaymentProvider)]),
                         fingerprintKey: testKey, configuration: configuration, now: { clock.now })
            }
            return Hosts(stores: stores, engines: engines)
        }

        func close() async {
            for store in stores { await store.close() }
        }

        func session(key: String? = nil) async throws -> Session {
            try await engines[0].createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"),
                                               idempotencyKey: key).session
        }
    }

    /// 100 identical requests at once, half to each host: one session is
    /// made, one authorize is sent, and every caller gets the same answer.
    @Test(.heavy(.shared, limit: .seconds(120))) func aHundredIdenticalRequestsAcrossTwoHostsRunOnce() async throws {
        // The authorize is held until the test lets it go, so the other
        // host's requests all arrive while the first is in flight.
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let gate = Mutex<AsyncStream<Void>.Iterator?>(release.makeAsyncIterator())
        let provider = ScriptedProvider("a") { call in
            if case .authorize = call {
                var held = gate.withLock { $0.take() }
                _ = await held?.next()
            }
            return .answered(ScriptedProvider.success(call))
        }
        let hosts = try await Hosts.start(provider, clock: TestClock())
        defer { Task { await hosts.close() } }
        let request = NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-100")
        let sessions = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<100 {
                group.addTask { try await hosts.engines[i % 2].createSession(request, idempotencyKey: "create-100").session.id }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(sessions).count == 1, "one session for one key: \(Set(sessions))")
        let session = try #require(sessions.first)

        let attempts = try await withThrowingTaskGroup(of: Attempt.self) { group in
            for i in 0..<100 {
                group.addTask { try await hosts.engines[i % 2].attempt(session: session, NewAttempt(method: "mada"), idempotencyKey: "pay-100") }
            }
            // The sending host's other requests wait behind its key; the other
            // host's 50 are answered with the attempt in flight, from the store.
            var answered: [Attempt] = []
            while answered.count < 50, let attempt = try await group.next() { answered.append(attempt) }
            #expect(answered.allSatisfy { $0.status == .processing }, "\(answered.map(\.status))")
            releasing.yield()
            return try await group.reduce(into: answered) { $0.append($1) }
        }
        #expect(provider.count(.authorize) == 1, "the provider was asked \(provider.count(.authorize)) times")
        #expect(Set(attempts.map(\.id)).count == 1)
        let stored = try #require(try await hosts.stores[1].session(session))
        #expect(stored.attempts.count == 1 && stored.attempts[0].status == .succeeded && stored.status == .completed)
        // Asked again once it is answered, on either host: the answer.
        for engine in hosts.engines {
            let again = try await engine.attempt(session: session, NewAttempt(method: "mada"), idempotencyKey: "pay-100")
            #expect(again.id == stored.attempts[0].id && again.status == .succeeded)
        }
        #expect(provider.count(.authorize) == 1)
    }

    /// Attempts on one session from both hosts at once, each under its own
    /// key: at most one is ever live, and only live attempts reach the provider.
    @Test func concurrentAttemptsOnOneSessionFromBothHostsLeaveAtMostOneLive() async throws {
        let provider = ScriptedProvider("a") { call in
            if case .authorize(let r) = call {
                // The payer must act: the attempt stays live (pending).
                return .answered(AdapterResult(status: .pending, providerReference: "ref-\(r.paymentId)",
                                               action: PaymentAction(type: .redirect, url: "https://acs.example/\(r.paymentId)")))
            }
            return .answered(ScriptedProvider.success(call))
        }
        let hosts = try await Hosts.start(provider, clock: TestClock())
        defer { Task { await hosts.close() } }
        let session = try await hosts.session()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for i in 0..<40 {
                group.addTask {
                    do {
                        return try await hosts.engines[i % 2].attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "try-\(i)").status.rawValue
                    } catch {
                        return error.code
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        let stored = try #require(try await hosts.stores[0].session(session.id))
        #expect(stored.attempts.filter { !$0.status.isFinal }.count <= 1)
        #expect(stored.attempts.count == 1, "\(stored.attempts.map(\.status))")
        #expect(outcomes.filter { $0 == "pending" }.count == 1)
        #expect(outcomes.filter { $0 != "pending" }.allSatisfy { $0 == "invalid_state" }, "\(Set(outcomes))")
        #expect(provider.count(.authorize) == 1)
    }

    /// A host stops mid-attempt (its store gone, its provider call never
    /// answered): once the attempt's lease ends, the other host's
    /// reconciliation verifies it, and the provider's one charge is the
    /// attempt's outcome.
    @Test func aHostGoneMidAttemptHasItsAttemptReconciledByTheOther() async throws {
        let charges = Mutex<[String: Int]>([:])
        let sent = AsyncStream<String>.makeStream()
        // The host that asked is gone: its authorize is answered only when the test ends.
        let (gone, ending) = AsyncStream<Void>.makeStream()
        let provider = ScriptedProvider("a") { call in
            switch call {
            case .authorize(let r):
                // The provider charges, then the host that asked is gone
                // before its answer arrives: it never returns.
                charges.withLock { $0[r.paymentId, default: 0] += 1 }
                sent.continuation.yield(r.paymentId)
                for await _ in gone {}
                return .unknown("the host is gone")
            case .verify(let r):
                let charged = charges.withLock { $0[r.paymentId, default: 0] }
                return .answered(charged == 1 ? AdapterResult(status: .succeeded, providerReference: "ref-\(r.paymentId)", amount: Money(value: 1000, currency: "SAR"))
                                              : AdapterResult(status: .failed, problem: AdapterProblem(code: .notFound, message: "no such payment", retryable: false)))
            default:
                return .answered(ScriptedProvider.success(call))
            }
        }
        let clock = TestClock()
        let hosts = try await Hosts.start(provider, clock: clock)
        defer { Task { await hosts.close() } }
        let session = try await hosts.session()
        let doomed = Task { try? await hosts.engines[0].attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "pay") }
        var events = sent.stream.makeAsyncIterator()
        let paymentID = try #require(await events.next())
        await hosts.stores[0].close()   // host A is gone: it commits nothing more
        let reconciler = Reconciler(checkout: hosts.engines[1])
        #expect(await reconciler.runPass().verified == 0, "not before the lease ends")
        #expect(try await hosts.stores[1].session(session.id)?.attempts.first?.status == .processing)
        clock.advance(60)
        let pass = await reconciler.runPass()
        #expect(pass.verified == 1)
        let stored = try #require(try await hosts.stores[1].session(session.id))
        #expect(stored.attempts.map(\.id) == [paymentID] && stored.attempts[0].status == .succeeded && stored.status == .completed)
        #expect(charges.withLock { $0 } == [paymentID: 1])
        #expect(provider.count(.authorize) == 1, "the other host sent nothing again")
        ending.finish()
        _ = await doomed.value
    }

    /// Thirty attempts due for a check, both hosts reconciling at once (each
    /// several passes): each check runs once, on one host.
    @Test func eachDueCheckRunsOnExactlyOneHost() async throws {
        let provider = ScriptedProvider("a") { call in
            switch call {
            case .authorize(let r):
                return .answered(AdapterResult(status: .pending, providerReference: "ref-\(r.paymentId)"))
            case .verify(let r):
                return .answered(AdapterResult(status: .succeeded, providerReference: r.providerReference, amount: Money(value: 1000, currency: "SAR")))
            default:
                return .answered(ScriptedProvider.success(call))
            }
        }
        let clock = TestClock()
        let hosts = try await Hosts.start(provider, clock: clock)
        defer { Task { await hosts.close() } }
        for i in 0..<30 {
            let session = try await hosts.session()
            let attempt = try await hosts.engines[i % 2].attempt(session: session.id, NewAttempt(method: "mada"))
            #expect(attempt.status == .pending)
        }
        clock.advance(10)
        let passes = await withTaskGroup(of: Reconciler.Pass.self) { group in
            for host in 0..<2 {
                group.addTask {
                    let reconciler = Reconciler(checkout: hosts.engines[host], parallelism: 4, batch: 6)
                    var total = Reconciler.Pass()
                    for _ in 0..<4 {
                        let pass = await reconciler.runPass()
                        total.verified += pass.verified
                        total.failed += pass.failed
                    }
                    return total
                }
            }
            return await group.reduce(into: [Reconciler.Pass]()) { $0.append($1) }
        }
        let verifies = provider.calls.compactMap { call -> String? in
            if case .verify(let r) = call { return r.paymentId }
            return nil
        }
        #expect(verifies.count == 30 && Set(verifies).count == 30, "\(verifies.count) checks for 30 attempts")
        #expect(passes.map(\.verified).reduce(0, +) == 30 && passes.allSatisfy { $0.failed == 0 }, "\(passes)")
    }
}

extension ManyHostsTests {
    /// A reader on host A sees the events host B commits, each once and in
    /// order, also across A losing its listening connection; and a reader
    /// resumes after any number on either host.
    @Test(.heavy(.shared, limit: .seconds(120))) func aStreamOnOneHostSeesTheOtherHostsEventsOnceEachInOrder() async throws {
        let provider = ScriptedProvider.approving("a")
        let hosts = try await Hosts.start(provider, clock: TestClock())
        defer { Task { await hosts.close() } }
        let session = try await hosts.session()
        let stream = try await hosts.engines[0].events(ofSession: session.id)
        var reader = Reader(stream)
        #expect(try await reader.read(upTo: 1).map(\.type) == ["session.created"])

        // Host B pays: A's reader gets B's events.
        let paid = try await hosts.engines[1].attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(paid.status == .succeeded)
        var recorded = try await hosts.stores[1].events(ofSession: session.id, after: 0)
        #expect(try await reader.read(upTo: recorded.last!.sequence).map(\.sequence) == Array(2...recorded.last!.sequence))

        // A's listening connection is cut: what B commits meanwhile still
        // reaches A's reader, once A listens again.
        let cut = try await hosts.stores[1].withConnection { connection, logger in
            try await connection.query("SELECT count(pg_terminate_backend(pid))::int8 FROM pg_stat_activity WHERE query LIKE 'LISTEN%'", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
        }
        #expect(cut >= 1)
        _ = try await hosts.engines[1].refund(payment: paid.id, amount: 300, idempotencyKey: "refund-1")
        recorded = try await hosts.stores[1].events(ofSession: session.id, after: 0)
        let last = recorded.last!.sequence
        let after = try await reader.read(upTo: last)
        #expect(after.map(\.sequence) == Array((last - Int64(after.count) + 1)...last) && after.last?.type == recorded.last?.type)
        #expect(reader.all.map(\.sequence) == Array(1...last), "every event once, in order")

        // Resumed after event 2, on either host: the same events.
        for engine in hosts.engines {
            var resumed = Reader(try await engine.events(ofSession: session.id, after: 2))
            #expect(try await resumed.read(upTo: last).map(\.sequence) == Array(3...last))
        }
    }

    /// A host whose idempotency fingerprint key is not the others' would take
    /// an identical retry for another request: it is refused every call,
    /// saying why, while the hosts that agree go on; a host started with the
    /// right key is served.
    @Test func aHostWithAnotherFingerprintKeyServesNothing() async throws {
        let provider = ScriptedProvider.approving("a")
        let schema = TestPostgres.newSchema()
        func engine(_ store: PostgresCheckoutStore, key: Data) -> Checkout {
            Checkout(store: store, providers: StaticProviderDirectory([(profile("a", priority: 1), provider as any PaymentProvider)]), fingerprintKey: key)
        }
        let first = try await TestPostgres.store(schema: schema)
        let agreeing = engine(first, key: testKey)
        let session = try await agreeing.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"), idempotencyKey: "k")

        let stranger = try await TestPostgres.store(schema: schema)
        let other = engine(stranger, key: Data(repeating: 9, count: 32))
        await #expect {
            try await other.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"), idempotencyKey: "k")
        } throws: { error in
            (error as? Problem)?.code == .storeUnavailable
        }
        await #expect {
            try await stranger.session(session.session.id)
        } throws: { error in
            "\(error)".contains("idempotency.key")
        }
        #expect(!stranger.isAvailable)
        // Refused also when it starts while the database is known to it only
        // through its recovery (a new store, the check given before it is up).
        let late = PostgresCheckoutStore(configuration: first.configuration)
        let lateEngine = engine(late, key: Data(repeating: 9, count: 32))
        await #expect(throws: StoreUnavailable.self) { _ = try await late.ready(within: .seconds(5)) }
        _ = lateEngine

        let replay = try await agreeing.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"), idempotencyKey: "k")
        #expect(replay.session.id == session.session.id)
        let right = try await TestPostgres.store(schema: schema)
        let again = try await engine(right, key: testKey).createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"), idempotencyKey: "k")
        #expect(again.session.id == session.session.id, "a host with the shared key answers as the first did")
        for store in [first, stranger, late, right] { await store.close() }
    }

    /// A capture host A sent and is still waiting for: host B's retry under
    /// the same key is told it is in progress, and sends nothing; once A has
    /// its answer, B's retry gets it. The provider captured once.
    @Test(.heavy(.shared, limit: .seconds(120))) func aRetryOnAnotherHostDoesNotResendAnOperationInFlight() async throws {
        let (sent, sending) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let gate = Mutex<AsyncStream<Void>.Iterator?>(release.makeAsyncIterator())
        let provider = ScriptedProvider("a") { call in
            if case .capture = call {
                sending.yield()
                var waiting = gate.withLock { $0.take() }
                _ = await waiting?.next()
            }
            return .answered(ScriptedProvider.success(call))
        }
        let hosts = try await Hosts.start(provider, clock: TestClock())
        defer { Task { await hosts.close() } }
        let session = try await hosts.engines[0].createSession(
            NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o", capture: .manual)).session
        let payment = try await hosts.engines[0].attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(payment.status == .authorized)
        let first = Task { try await hosts.engines[0].capture(payment: payment.id, amount: 400, idempotencyKey: "cap-1") }
        var sentOnce = sent.makeAsyncIterator()
        await sentOnce.next()
        await #expect {
            try await hosts.engines[1].capture(payment: payment.id, amount: 400, idempotencyKey: "cap-1")
        } throws: { error in
            (error as? Problem)?.code == .operationInProgress && (error as? Problem)?.retryable == true
        }
        #expect(provider.count(.capture) == 1, "host B sent the capture again while A waited for its answer")
        releasing.yield()
        let captured = try await first.value
        let again = try await hosts.engines[1].capture(payment: payment.id, amount: 400, idempotencyKey: "cap-1")
        #expect(again == captured && provider.count(.capture) == 1)
    }

    /// Hosts that start together with the same fingerprint key are both
    /// served: the second's check, made while the first's is being written,
    /// is read again rather than taken for another key.
    @Test func hostsStartingTogetherWithTheSameKeyAreBothServed() async throws {
        for _ in 0..<10 {
            let schema = TestPostgres.newSchema()
            let stores = [try await TestPostgres.store(schema: schema), try await TestPostgres.store(schema: schema)]
            await withTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { store.expectFingerprintKey(check: "the same key's check") } }
            }
            for store in stores {
                #expect(try await store.sessionVersion("s") == nil)
                #expect(store.isAvailable)
                await store.close()
            }
        }
    }

    /// Reads a stream up to an event number (the tests that use it have a time limit).
    struct Reader {
        private var iterator: SessionEvents.Iterator
        private(set) var all: [SessionEvent] = []

        init(_ events: SessionEvents) {
            iterator = events.makeAsyncIterator()
        }

        mutating func read(upTo number: Int64) async throws -> [SessionEvent] {
            var read: [SessionEvent] = []
            while read.last.map({ $0.sequence < number }) ?? true {
                guard let event = try await iterator.next() else { break }
                read.append(event)
            }
            all += read
            return read
        }

    }
}

private extension Error {
    var code: String { (self as? Problem)?.code.rawValue ?? "\(self)" }
}
