import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Testing
import TestSupport

/// The store going away under a running engine: what callers are told, what
/// is left for reconciliation, and that no provider notification is lost.
@Suite struct StoreUnavailableTests {
    /// An engine over an in-memory SQLite store behind an ``UnavailableStore``,
    /// with one scripted provider, its logs captured.
    struct Fixture {
        let store: UnavailableStore
        let clock = TestClock()
        let logs = CapturedLogs()
        let checkout: Checkout

        init(_ provider: ScriptedProvider, store: UnavailableStore) {
            self.store = store
            var configuration = CheckoutConfiguration()
            configuration.reconcileBackoff = [1, 2, 4]
            let clock = self.clock
            checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile(provider.id, priority: 1), provider as any PaymentProvider)]),
                                fingerprintKey: testKey, configuration: configuration, logger: logs.logger("checkout"), now: { clock.now })
        }

        func session(capture: CaptureMode = .automatic) async throws -> Session {
            try await checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1", capture: capture)).session
        }

        /// The log lines that quote the store's reason.
        var reasonLines: [String] { logs.all.filter { $0.contains(store.reason) } }
    }

    static func newStore() throws -> UnavailableStore { UnavailableStore(try SQLiteCheckoutStore.inMemory()) }

    /// What a caller is told of an unavailable store: a retryable 503 that
    /// claims nothing about what was sent and names nothing of the store.
    static func isUnavailableProblem(_ error: any Error, store: UnavailableStore) -> Bool {
        guard let problem = error as? Problem else { return false }
        return problem.code == .storeUnavailable && problem.status == 503 && problem.retryable
            && problem.detail.hasPrefix("the payment store is unavailable; retry after 2 seconds")
            && problem.detail.contains("same idempotency key")
            && !problem.detail.contains("nothing was sent") && !problem.detail.contains(store.reason)
    }

    // MARK: A provider's answer that cannot be recorded

    /// The database goes away while the provider authorizes: the attempt's
    /// intent was recorded, the answer is not. The caller's problem does not
    /// say nothing was sent (the provider charged), the reason is logged once,
    /// a retry under the key returns the attempt without a second authorize,
    /// and reconciliation settles it from the provider once its lease ends.
    @Test func anAuthorizeWhoseAnswerCannotBeRecordedIsNotReportedAsNotSentAndIsReconciled() async throws {
        let store = try Self.newStore()
        let a = ScriptedProvider("a") { call in
            // The database goes away while the provider authorizes.
            if case .authorize = call { store.fail([.commit]) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = Fixture(a, store: store)
        let session = try await f.session()
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "pay-1") } throws: {
            Self.isUnavailableProblem($0, store: store)
        }
        #expect(a.count(.authorize) == 1)
        #expect(f.reasonLines.count == 1 && f.reasonLines.allSatisfy { $0.hasPrefix("warning") }, "\(f.reasonLines)")
        store.recover()
        let stored = try #require(try await store.session(session.id))
        #expect(stored.attempts.count == 1 && stored.attempts[0].status == .processing && stored.attempts[0].leaseUntil != nil)
        let retry = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "pay-1")
        #expect(retry.id == stored.attempts[0].id && retry.status == .processing)
        #expect(a.count(.authorize) == 1, "a retry under the key sent the payment again")
        f.clock.advance(60)
        #expect(await Reconciler(checkout: f.checkout).runPass().verified == 1)
        let settled = try await f.checkout.session(session.id).session
        #expect(settled.status == .completed && settled.attempts[0].status == .succeeded)
        #expect(a.count(.authorize) == 1)
    }

    /// The same for a capture: its hold was recorded before the call; the
    /// answer is not. A retry under the key learns the outcome (the provider
    /// receives the same key and captures once).
    @Test func aCaptureWhoseAnswerCannotBeRecordedIsNotReportedAsNotSentAndARetryLearnsTheOutcome() async throws {
        let store = try Self.newStore()
        let books = ProviderBooks()
        let first = Shared(true)
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            // The database goes away while the first capture is at the provider.
            if case .capture = call, first.withLock({ (value: inout Bool) -> Bool in defer { value = false }; return value }) { store.fail([.commit]) }
            return .answered(result)
        }
        let f = Fixture(a, store: store)
        let payment = try await f.checkout.attempt(session: try await f.session(capture: .manual).id, NewAttempt(method: "mada"))
        #expect(payment.status == .authorized)
        await #expect { try await f.checkout.capture(payment: payment.id, idempotencyKey: "cap-1") } throws: {
            Self.isUnavailableProblem($0, store: store)
        }
        #expect(f.reasonLines.count == 1 && f.reasonLines.allSatisfy { $0.hasPrefix("warning") }, "\(f.reasonLines)")
        #expect(books.payment(payment.id)?.captured == 1000, "the provider captured")
        store.recover()
        let change = try await f.checkout.capture(payment: payment.id, idempotencyKey: "cap-1")
        #expect(change.balance.captured == 1000 && change.balance.inFlight.isEmpty)
        #expect(books.payment(payment.id)?.captured == 1000, "captured once")
    }

    // MARK: Notifications while the store is away

    /// A verified notification that cannot be looked up or recorded is
    /// refused (503), never acknowledged as ignored: the provider resends it,
    /// and once the store is back the resent one is applied.
    @Test func aNotificationTheStoreCannotTakeIsRefusedSoTheProviderResendsIt() async throws {
        let store = try Self.newStore()
        let a = ScriptedProvider("a", webhook: { request in
            let paymentID = String(decoding: Data(base64Encoded: request.body) ?? Data(), as: UTF8.self)
            return WebhookResult(verified: true, eventId: "evt-1", paymentId: paymentID, providerReference: "r", status: .succeeded)
        }) { call in
            if case .authorize(let r) = call { return .answered(AdapterResult(status: .pending, providerReference: "r-\(r.paymentId)")) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = Fixture(a, store: store)
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.status == .pending)
        let failures: [Set<UnavailableStore.Method>] = [[.hasWebhook, .sessionID, .session, .commit], [.sessionID], [.hasWebhook], [.commit]]
        for failing in failures {
            store.fail(failing)
            await #expect("store failing \(failing)") {
                try await f.checkout.webhook(provider: "a", headers: [:], body: Data(attempt.id.utf8))
            } throws: { error in
                let problem = error as? Problem
                return problem?.status == 503 && problem?.code == .storeUnavailable && problem?.detail.contains(store.reason) == false
            }
        }
        store.recover()
        #expect(try await f.checkout.session(session.id).session.attempts[0].status == .pending, "a refused notification changed the payment")
        let resent = try await f.checkout.webhook(provider: "a", headers: [:], body: Data(attempt.id.utf8))
        #expect(resent == .applied(AttemptRef(sessionID: session.id, attemptID: attempt.id)))
        #expect(try await f.checkout.session(session.id).session.status == .completed)
    }

    // MARK: Reconciliation in rounds

    /// Five attempts left pending by their provider, due for a check.
    static func fiveDueAttempts() async throws -> (UnavailableStore, ScriptedProvider, Fixture) {
        let store = try newStore()
        let a = ScriptedProvider("a") { call in
            if case .authorize(let r) = call { return .answered(AdapterResult(status: .pending, providerReference: "r-\(r.paymentId)")) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = Fixture(a, store: store)
        for _ in 0..<5 {
            #expect(try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada")).status == .pending)
        }
        f.clock.advance(10)
        return (store, a, f)
    }

    /// Parallelism 2, five due attempts: the pass claims at most two at a
    /// time (a claim is held only while its own round is verified), verifies
    /// every attempt once, and counts five.
    @Test func aPassClaimsNoMoreAttemptsThanItVerifiesAtOnce() async throws {
        let (store, a, f) = try await Self.fiveDueAttempts()
        let pass = await Reconciler(checkout: f.checkout, parallelism: 2).runPass()
        #expect(pass.verified == 5 && pass.failed == 0, "\(pass)")
        #expect(!store.claimLimits.isEmpty && store.claimLimits.allSatisfy { $0 <= 2 }, "claims of \(store.claimLimits)")
        let verified = a.calls.compactMap { call -> String? in
            if case .verify(let r) = call { return r.paymentId }
            return nil
        }
        #expect(verified.count == 5 && Set(verified).count == 5, "\(verified)")
    }

    /// An attempt whose reconciliation fails stays due and this claimant's,
    /// so the store hands it back: it is tried once per pass, and takes no
    /// other attempt's place in the pass.
    @Test func anAttemptWhoseReconciliationFailsIsTriedOncePerPass() async throws {
        let (store, a, f) = try await Self.fiveDueAttempts()
        store.fail([.commit])
        let reconciler = Reconciler(checkout: f.checkout, parallelism: 2)
        let failed = await reconciler.runPass()
        #expect(failed.verified == 0 && failed.failed == 5, "\(failed)")
        #expect(a.count(.verify) == 5)
        store.recover()
        #expect(await reconciler.runPass().verified == 5)
        #expect(a.count(.verify) == 10)
    }

    /// A claim the store cannot answer ends the pass's verifying (the next
    /// pass tries again), logged at warning rather than swallowed.
    @Test func aClaimTheStoreCannotAnswerIsLogged() async throws {
        let store = try Self.newStore()
        let f = Fixture(.approving("a"), store: store)
        store.fail([.claimDueAttempts, .expiredSessions])
        #expect(await Reconciler(checkout: f.checkout).runPass() == Reconciler.Pass())
        #expect(f.reasonLines.count == 2 && f.reasonLines.allSatisfy { $0.hasPrefix("warning") }, "\(f.reasonLines)")
    }
}
