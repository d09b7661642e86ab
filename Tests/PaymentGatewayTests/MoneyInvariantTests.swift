import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import SQLiteCheckoutStore
import Synchronization
import Testing
import TestSupport

/// The crown of the fail-closed rules: whatever providers do and whenever the
/// engine dies, after reconciliation the engine's books equal the providers'.
///
/// Each sequence runs the real engine and store against providers whose every
/// call, at random, is answered, declined, answered after acting but lost,
/// lost before acting, completed with a random `gw_status` (named or not,
/// mapped by the host's real rule), left pending, or never answered because
/// the engine "crashes" (it is abandoned mid-call and a new engine starts on
/// the same store). Operations are retried under the same or another key, with
/// the same or another body, in both modes. Then the providers turn honest and
/// reconciliation runs until nothing is due, and for every payment: captured,
/// refunded and voided equal the provider's books; nothing stays held or
/// pending; no attempt was charged by two providers or charged without the
/// engine knowing; no provider of the other mode served a session.
@Suite(.heavy) struct MoneyInvariantTests {
    @Test(arguments: 0..<200)
    func afterReconciliationTheEnginesBooksEqualTheProviders(seed: Int) async throws {
        let run = try InvariantRun(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        await run.play(steps: 40)
        let failures = try await run.settleAndCheck()
        if ProcessInfo.processInfo.environment["INVARIANT_TRACE"] == "\(seed)" { Issue.record("trace:\n\(run.trace.withLock { $0.joined(separator: "\n") })") }
        #expect(failures.isEmpty, "seed \(seed): \(failures.joined(separator: "; "))\n\(run.trace.withLock { $0.joined(separator: "\n") })")
    }
}

/// What a call under test turned into: it finished, or its provider call hangs
/// (the engine that made it is then treated as crashed).
enum StepEnd: Sendable { case done, hung }

/// The step a provider call belongs to (inherited by the tasks a step starts,
/// such as a reconciliation pass's), so a hang is reported to that step only.
enum StepContext {
    @TaskLocal static var sink: AsyncStream<StepEnd>.Continuation?
}

/// A provider whose answers are random but whose books are the truth.
final class ChaosProvider: PaymentProvider, Sendable {
    let id: String
    let books = ProviderBooks()
    private let rng: Mutex<SplitMix64>
    private let honest = Mutex(false)
    /// What releases hung calls.
    private let release: Mutex<[CheckedContinuation<Void, Never>]> = Mutex([])
    private let released = Mutex(false)

    static let statuses: [Int32] = [1, 2, 4, 7, 8, 9, 12, 3, 5, 6, 10, 11, 13, -1, 1000]

    init(_ id: String, seed: UInt64) {
        self.id = id
        self.rng = Mutex(SplitMix64(seed: seed))
    }

    func beHonest() { honest.withLock { $0 = true } }

    func releaseHungCalls() {
        let waiting = release.withLock { all in
            released.withLock { $0 = true }
            defer { all = [] }
            return all
        }
        for continuation in waiting { continuation.resume() }
    }

    private func roll(_ n: UInt64) -> Int { Int(rng.withLock { $0.next() } % n) }

    private func key(_ call: ProviderCall) -> String? {
        switch call {
        case .authorize(let r): r.idempotencyKey
        case .capture(let r), .refund(let r): r.idempotencyKey
        case .void(let r): r.idempotencyKey
        default: nil
        }
    }

    func perform(_ call: ProviderCall) async -> ProviderReply {
        if honest.withLock({ $0 }) { return .answered(books.act(call)) }
        // A key the provider already answered is answered from its books (or lost): a real provider's idempotency.
        let answered = key(call).map(books.hasAnswer) ?? false
        let pick = roll(100)
        switch pick {
        case 40..<50 where !answered && call.operation != .verify:
            let safe = call.operation == .authorize && roll(2) == 0
            return .answered(AdapterResult(status: .failed, problem: AdapterProblem(
                code: safe ? "provider_error" : "card_declined", message: "declined", retryable: safe, safeToRetryElsewhere: safe)))
        case 50..<60:
            _ = books.act(call)
            return .unknown("answer lost after the provider acted")
        case 60..<70:
            return .unknown("lost before the provider acted")
        case 70..<80:
            let status = ABIStatus(rawValue: Self.statuses[roll(UInt64(Self.statuses.count))])
            let error = roll(2) == 0 ? AdapterCallError.failed(status, message: "chaos") : .refused(status, message: "chaos")
            let reply = ProviderReply(failed: error, operation: call.operation)
            // Only a status that proves nothing was sent guarantees the provider did nothing.
            if !status.provesNothingSent, roll(2) == 0 { _ = books.act(call) }
            // A retry of a key the provider already acted on may still fail to
            // leave this time (unreachable): that says nothing of the first try.
            return reply
        case 80..<86 where !answered && call.operation != .verify && call.operation != .`continue`:
            if call.operation == .authorize {
                _ = books.act(call)
                return .answered(AdapterResult(status: .pending, providerReference: "ref-\(call.paymentId)"))
            }
            return .answered(AdapterResult(status: .pending))
        case 86..<90:
            guard let sink = StepContext.sink else { return .unknown("lost") }
            if roll(2) == 0 { _ = books.act(call) }
            sink.yield(.hung)
            await withCheckedContinuation { continuation in
                let late = release.withLock { all -> Bool in
                    if released.withLock({ $0 }) { return true }
                    all.append(continuation)
                    return false
                }
                if late { continuation.resume() }
            }
            return .unknown("the engine that made this call was gone")
        default:
            return .answered(books.act(call))
        }
    }

    func webhook(_ request: WebhookRequest) async -> WebhookResult? { nil }
}

final class InvariantClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// One random sequence and its bookkeeping.
final class InvariantRun: Sendable {
    let store: SQLiteCheckoutStore
    let clock = InvariantClock()
    let providers: [ChaosProvider]
    let profiles: [ProviderProfile]
    let rng: Mutex<SplitMix64>
    let engine: Mutex<Checkout>
    let sessions = Mutex<[String]>([])
    let keys = Mutex<[(kind: Int, target: String, key: String)]>([])
    let moneyRequests = Mutex<[(operation: Int, payment: String, key: String, amount: Int64?)]>([])
    let orphans = Mutex<[Task<Void, Never>]>([])
    let trace = Mutex<[String]>([])

    init(seed: UInt64) throws {
        store = try SQLiteCheckoutStore.inMemory()
        let ids: [(String, PaymentMode, Int)] = [("live-a", .live, 1), ("live-b", .live, 2), ("test-a", .test, 1), ("test-b", .test, 2)]
        providers = ids.enumerated().map { ChaosProvider($1.0, seed: seed &+ UInt64($0) &* 7919) }
        profiles = ids.map { id, mode, priority in
            ProviderProfile(id: id, mode: mode, priority: priority, methods: ["mada"], currencies: ["SAR"], countries: ["SA"],
                            callTimeout: .seconds(5))
        }
        rng = Mutex(SplitMix64(seed: seed))
        engine = Mutex(Self.makeEngine(store: store, providers: providers, profiles: profiles, clock: clock))
    }

    static func makeEngine(store: SQLiteCheckoutStore, providers: [ChaosProvider], profiles: [ProviderProfile], clock: InvariantClock) -> Checkout {
        var configuration = CheckoutConfiguration()
        configuration.reconcileBackoff = [1, 2, 4, 8]
        let directory = StaticProviderDirectory(zip(profiles, providers).map { ($0, $1 as any PaymentProvider) })
        return Checkout(store: store, providers: directory, fingerprintKey: Data(repeating: 9, count: 32), configuration: configuration,
                        now: { clock.now })
    }

    private func roll(_ n: Int) -> Int { Int(rng.withLock { $0.next() } % UInt64(n)) }
    private func note(_ line: String) { trace.withLock { $0.append(line) } }

    /// A key for an operation on `target`: new, or one used before (same kind or not).
    private func key(kind: Int, target: String) -> String {
        let used = keys.withLock { $0 }
        if !used.isEmpty, roll(10) < 4 { return used[roll(used.count)].key }
        let key = "k\(used.count)"
        keys.withLock { $0.append((kind, target, key)) }
        return key
    }

    private func payments() async -> [Attempt] {
        var found: [Attempt] = []
        for id in sessions.withLock({ $0 }) {
            if let snapshot = try? await engine.withLock({ $0 }).session(id) { found += snapshot.session.attempts }
        }
        return found
    }

    /// Runs `body` on the current engine; if its provider call hangs, the
    /// engine is abandoned (crashed) and a new one starts on the same store.
    private func step(_ name: String, _ body: @escaping @Sendable (Checkout) async throws -> String) async {
        let checkout = engine.withLock { $0 }
        let (events, sink) = AsyncStream<StepEnd>.makeStream()
        let task = Task {
            let outcome: String
            do {
                outcome = try await StepContext.$sink.withValue(sink) { try await body(checkout) }
            } catch {
                outcome = "\(error)".prefix(120).description
            }
            self.note("  \(name) -> \(outcome)")
            sink.yield(.done)
        }
        var iterator = events.makeAsyncIterator()
        if await iterator.next() == .hung {
            note("  \(name) -> engine crashed mid-call; restarting on the same store")
            orphans.withLock { $0.append(task) }
            restart()
        }
    }

    private func restart() {
        engine.withLock { $0 = Self.makeEngine(store: store, providers: providers, profiles: profiles, clock: clock) }
    }

    func play(steps: Int) async {
        for _ in 0..<steps {
            let sessionIDs = sessions.withLock { $0 }
            let choice = sessionIDs.isEmpty ? 0 : roll(11)
            switch choice {
            case 0:
                let mode: PaymentMode = roll(2) == 0 ? .live : .test
                let capture: CaptureMode = roll(2) == 0 ? .manual : .automatic
                let amount = Int64(100 + roll(5000))
                await step("session \(mode) \(capture) \(amount)") { engine in
                    let s = try await engine.createSession(NewSession(amount: Money(value: amount, currency: "SAR"), country: "SA", orderId: "o", capture: capture), mode: mode)
                    self.sessions.withLock { $0.append(s.session.id) }
                    return s.session.id
                }
            case 1, 2:
                let session = sessionIDs[roll(sessionIDs.count)]
                let key = roll(4) == 0 ? nil : self.key(kind: 0, target: session)
                let pin = roll(5) == 0 ? providers[roll(providers.count)].id : nil
                await step("attempt \(session) key \(key ?? "-") pin \(pin ?? "-")") { engine in
                    let a = try await engine.attempt(session: session, NewAttempt(method: "mada", provider: pin), idempotencyKey: key)
                    return "\(a.id) \(a.status) via \(a.providerID)"
                }
            case 3, 4, 5:
                let paid = await payments().filter { $0.status == .succeeded || $0.status == .authorized }
                guard !paid.isEmpty else { continue }
                var payment = paid[roll(paid.count)]
                var operation = roll(3)
                var key = self.key(kind: 1 + operation, target: payment.id)
                var amount: Int64? = roll(3) == 0 ? nil : Int64(1 + roll(Int(payment.requested.value)))
                let earlier = moneyRequests.withLock { $0 }
                if !earlier.isEmpty, roll(10) < 4 {
                    // The same request again, under the same key: a merchant's retry.
                    let again = earlier[roll(earlier.count)]
                    (operation, key, amount) = (again.operation, again.key, again.amount)
                    payment = paid.first { $0.id == again.payment } ?? payment
                }
                let request = (operation: operation, payment: payment.id, key: key, amount: amount)
                moneyRequests.withLock { $0.append(request) }
                let (paymentID, op, k, a) = (payment.id, operation, key, amount)
                await step("\(["capture", "refund", "void"][op]) \(paymentID) \(a.map(String.init) ?? "all") key \(k)") { engine in
                    let change = switch op {
                    case 0: try await engine.capture(payment: paymentID, amount: a, idempotencyKey: k)
                    case 1: try await engine.refund(payment: paymentID, amount: a, idempotencyKey: k)
                    default: try await engine.void(payment: paymentID, idempotencyKey: k)
                    }
                    return "captured \(change.balance.captured) refunded \(change.balance.refunded) voided \(change.balance.voided)"
                }
            case 6:
                let all = await payments()
                guard !all.isEmpty else { continue }
                let attempt = all[roll(all.count)]
                await step("verify \(attempt.id)") { engine in "\(try await engine.verify(attempt: attempt.id).status)" }
            case 7, 10:
                clock.advance(Double(roll(30)))
                await step("reconcile") { engine in "\(await Reconciler(checkout: engine).runPass())" }
            case 8:
                let seconds = Double(roll(120))
                clock.advance(seconds)
                note("  clock +\(seconds)s")
            default:
                note("  restart")
                restart()
            }
        }
    }

    /// Providers turn honest, hung calls end, reconciliation runs until
    /// nothing is due; then every invariant is checked. Returns what broke.
    func settleAndCheck() async throws -> [String] {
        for provider in providers {
            provider.beHonest()
            provider.releaseHungCalls()
        }
        for orphan in orphans.withLock({ $0 }) { await orphan.value }
        restart()
        let checkout = engine.withLock { $0 }
        for _ in 0..<40 {
            clock.advance(7200)
            await Reconciler(checkout: checkout).runPass()
            if try await store.dueAttempts(at: clock.now.addingTimeInterval(7200), limit: 1).isEmpty { break }
        }
        var failures: [String] = []
        if let due = try await store.dueAttempts(at: clock.now.addingTimeInterval(7200), limit: 10).first {
            failures.append("still due after reconciliation: \(due.attemptID)")
        }
        var known: [String: String] = [:]  // attempt id -> its provider
        for id in sessions.withLock({ $0 }) {
            let session = try await checkout.session(id).session
            for attempt in session.attempts {
                known[attempt.id] = attempt.providerID
                let profile = profiles.first { $0.id == attempt.providerID }!
                if profile.mode != session.mode { failures.append("\(attempt.id): a \(profile.mode) provider served a \(session.mode) session") }
                if !attempt.status.isFinal { failures.append("\(attempt.id) is still \(attempt.status)") }
                let book = providers.first { $0.id == attempt.providerID }!.books.payment(attempt.id)
                if let balance = attempt.balance {
                    guard let book else { failures.append("\(attempt.id) is \(attempt.status) but \(attempt.providerID) never charged it"); continue }
                    if balance.authorized.value != book.authorized { failures.append("\(attempt.id) authorized \(balance.authorized.value), provider \(book.authorized)") }
                    if balance.captured != book.captured { failures.append("\(attempt.id) captured \(balance.captured), provider \(book.captured)") }
                    if balance.refunded != book.refunded { failures.append("\(attempt.id) refunded \(balance.refunded), provider \(book.refunded)") }
                    if balance.voided != book.voided { failures.append("\(attempt.id) voided \(balance.voided), provider \(book.voided)") }
                    if !balance.inFlight.isEmpty { failures.append("\(attempt.id) still holds \(balance.inFlight)") }
                } else if book != nil {
                    failures.append("\(attempt.id) is \(attempt.status) but \(attempt.providerID) charged it")
                }
            }
        }
        for provider in providers {
            for paymentID in provider.books.payments.keys where known[paymentID] != provider.id {
                failures.append("\(provider.id) charged \(paymentID), which the engine \(known[paymentID].map { "gave to \($0)" } ?? "does not know")")
            }
        }
        return failures
    }
}
