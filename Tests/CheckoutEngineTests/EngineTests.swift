import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Synchronization
import TestSupport
import Testing

@Suite struct SessionFlowTests {
    @Test func aSessionListsOnlyMethodsOfEnabledMatchingProviders() async throws {
        let f = try EngineFixture([
            (profile("a", priority: 1, methods: ["mada"]), .approving("a")),
            (profile("b", priority: 2, enabled: false, methods: ["visa", "stcpay"]), .approving("b")),
            (profile("c", priority: 3, methods: ["tabby"]), .approving("c")),
        ])
        let snapshot = try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"))
        #expect(snapshot.availableMethods == ["mada", "tabby"])
        // Below every SAR limit (100...1,000,000) nothing is offered.
        let tiny = try await f.checkout.createSession(NewSession(amount: Money(value: 99, currency: "SAR"), country: "SA", orderId: "o"))
        #expect(tiny.availableMethods.isEmpty)
    }

    @Test func unknownCurrencyAndBadCountryAreRefusedWithTheirField() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        await #expect { try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "XXX"), orderId: "o")) } throws: {
            ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail.contains("XXX") == true
        }
        await #expect { try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "sa", orderId: "o")) } throws: {
            ($0 as? Problem)?.detail.contains("country") == true
        }
        await #expect { try await f.checkout.createSession(NewSession(amount: Money(value: 0, currency: "SAR"), orderId: "o")) } throws: {
            ($0 as? Problem)?.code == .invalidRequest
        }
    }

    /// An order id or an idempotency key with a control character (U+0000,
    /// a newline) is refused, naming it: no header could carry one, and no
    /// store may turn two of them into one.
    @Test func anOrderIdOrIdempotencyKeyWithAControlCharacterIsRefused() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        for order in ["o\u{0000}1", "o\n1", "o\u{7F}"] {
            await #expect { try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), orderId: order)) } throws: {
                ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail == "orderId must not contain control characters"
            }
        }
        for key in ["k\u{0000}", "k\r\n"] {
            await #expect { try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), orderId: "o"), idempotencyKey: key) } throws: {
                ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail == "an idempotency key must not contain control characters"
            }
        }
        #expect(try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), orderId: "طلب-١"), idempotencyKey: "ключ-1").session.status == .open)
    }

    @Test func aSuccessfulAttemptCompletesTheSessionAndIsLogged() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.status == .succeeded)
        #expect(attempt.providerID == "a")
        #expect(attempt.routingReason.contains("candidate 1 of 1"))
        let after = try await f.checkout.session(session.id)
        #expect(after.session.status == .completed)
        #expect(after.availableMethods.isEmpty)
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada")) } throws: {
            ($0 as? Problem)?.code == .invalidState
        }
        let types = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(types == ["session.created", "attempt.started", "attempt.succeeded", "session.completed"])
    }

    @Test func afterAFailedAttemptThePayerMayTryAgainWithAnyMethod() async throws {
        let declines = Shared(true)
        let a = ScriptedProvider("a") { call in
            if case .authorize = call, declines.withLock({ let d = $0; $0 = false; return d }) {
                return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .cardDeclined, message: "05", retryable: false)))
            }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(first.status == .failed)
        #expect(first.problem?.type == "https://gateway.dev/problems/card-declined")
        #expect(first.problem?.retryable == false)
        #expect(first.problem?.payerMessage.ar.isEmpty == false)
        let second = try await f.checkout.attempt(session: session.id, NewAttempt(method: "visa"))
        #expect(second.status == .succeeded)
    }

    @Test func abortIsRefusedWhileAnAttemptIsPendingAndAllowedOtherwise() async throws {
        let a = ScriptedProvider("a") { _ in .answered(AdapterResult(status: .pending, providerReference: "r", action: PaymentAction(type: .otp, otpLength: 6))) }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        _ = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.abort(session: session.id) } throws: { ($0 as? Problem)?.code == .invalidState }
        let other = try await f.session()
        let aborted = try await f.checkout.abort(session: other.id)
        #expect(aborted.session.status == .cancelled)
    }

    /// An abort withdraws a pending attempt at its provider (void, then
    /// verify) and goes on only when the verify shows it ended unpaid; a
    /// payer who paid meanwhile wins, and the abort is refused.
    @Test(arguments: [PaymentStatus.cancelled, .succeeded])
    func abortVoidsAPendingAttemptThenBelievesOnlyTheVerify(verified: PaymentStatus) async throws {
        let a = ScriptedProvider("a") { call in
            switch call {
            case .authorize: .answered(AdapterResult(status: .pending, providerReference: "r", action: PaymentAction(type: .redirect, url: "https://psp.example/3ds")))
            case .void: .answered(AdapterResult(status: .succeeded, providerReference: "r"))
            case .verify: .answered(AdapterResult(status: verified, providerReference: "r", problem: verified == .cancelled
                    ? AdapterProblem(code: .voided, message: "cancelled at the provider", retryable: false) : nil))
            default: .unknown("not scripted")
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let pending = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(pending.status == .pending)
        if verified == .cancelled {
            let aborted = try await f.checkout.abort(session: session.id, idempotencyKey: "abort-1")
            #expect(aborted.session.status == .cancelled && aborted.session.attempts.first?.status == .cancelled)
            #expect(a.keys(.void).count == 1 && a.keys(.void).first?.hasPrefix("\(pending.id):abort:") == true, "\(a.keys(.void))")
            // The abort's replay answers the same, and voids nothing more.
            let replay = try await f.checkout.abort(session: session.id, idempotencyKey: "abort-1")
            #expect(replay.session.status == .cancelled && a.count(.void) == 1)
        } else {
            await #expect { try await f.checkout.abort(session: session.id) } throws: { ($0 as? Problem)?.code == .invalidState }
            let paid = try await f.checkout.session(session.id)
            #expect(paid.session.status == .completed && paid.session.attempts.first?.status == .succeeded)
        }
    }

    /// A void the provider refuses (or cannot answer) changes nothing: the
    /// abort is refused and the attempt stays pending, for reconciliation.
    @Test func anAbortWhoseVoidIsNotConfirmedIsRefusedAndTheAttemptStaysPending() async throws {
        let a = ScriptedProvider("a") { call in
            switch call {
            case .authorize: .answered(AdapterResult(status: .pending, providerReference: "r", action: PaymentAction(type: .redirect, url: "https://psp.example/3ds")))
            case .void: .unknown("timed out")
            default: .unknown("not scripted")
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let pending = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.abort(session: session.id) } throws: { ($0 as? Problem)?.code == .invalidState }
        let after = try await f.checkout.session(session.id)
        #expect(after.session.status == .open && after.session.attempts.first?.id == pending.id && after.session.attempts.first?.status == .pending)
        #expect(a.count(.verify) == 0)
    }

    @Test func continueFeedsTheOTPAndFinishesTheAttempt() async throws {
        let a = ScriptedProvider("a") { call in
            switch call {
            case .authorize: .answered(AdapterResult(status: .pending, providerReference: "r1", action: PaymentAction(type: .otp, otpLength: 6)))
            case .proceed(let r) where r.otp == "123456": .answered(AdapterResult(status: .succeeded, providerReference: "r1"))
            case .proceed: .answered(AdapterResult(status: .pending, providerReference: "r1", action: PaymentAction(type: .otp, otpLength: 6),
                                                   problem: AdapterProblem(code: .otpInvalid, message: "wrong", retryable: true)))
            default: .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let pending = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(pending.status == .pending && pending.action?.type == .otp)
        let wrong = try await f.checkout.proceed(session: session.id, attempt: pending.id, PayerInput(otp: "000000"))
        #expect(wrong.status == .pending && wrong.problem?.code == .otpInvalid && wrong.problem?.retryable == true)
        let done = try await f.checkout.proceed(session: session.id, attempt: pending.id, PayerInput(otp: "123456"))
        #expect(done.status == .succeeded)
        await #expect { try await f.checkout.proceed(session: session.id, attempt: pending.id, PayerInput(otp: "123456")) } throws: {
            ($0 as? Problem)?.code == .invalidState
        }
    }

    @Test func aKWDAmountOf1234IsOnePointTwoThreeFourEverywhere() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        let session = try await f.session(1234, currency: "KWD")
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.balance?.authorized == Money(value: 1234, currency: "KWD"))
        #expect(try attempt.requested.decimalString() == "1.234")
        let reread = try await f.checkout.session(session.id).session
        #expect(try reread.amount.decimalString() == "1.234")
        let event = try await f.store.events(ofSession: session.id, after: 0).first { $0.type == .attemptSucceeded }
        #expect(event?.amount == Money(value: 1234, currency: "KWD"))
    }
}

@Suite struct RoutingFailoverTests {
    static func decline(safe: Bool) -> ScriptedProvider {
        ScriptedProvider("a") { call in
            guard case .authorize = call else { return .answered(ScriptedProvider.success(call)) }
            return .answered(AdapterResult(status: .failed, problem: AdapterProblem(
                code: safe ? "provider_error" : "card_declined", message: "x", retryable: safe, safeToRetryElsewhere: safe)))
        }
    }

    @Test func aSafeDeclineFailsOverToTheNextProvider() async throws {
        let a = Self.decline(safe: true)
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), b)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.status == .succeeded && attempt.providerID == "b")
        #expect(attempt.routingReason.contains("after a declined before charging"))
        let all = try await f.checkout.session(session.id).session.attempts
        #expect(all.map(\.status) == [.failed, .succeeded])
        #expect(a.count(.authorize) == 1 && b.count(.authorize) == 1)
    }

    @Test func nothingSentFailsOverToo() async throws {
        let a = ScriptedProvider("a") { _ in .notSent("invoke refused (GW_E_BUSY)") }
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), b)])
        let attempt = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada"))
        #expect(attempt.providerID == "b" && attempt.status == .succeeded)
    }

    /// The adapter refused the request itself: the next provider would be sent
    /// the same, so it is not tried, and the circuit counts it as healthy.
    @Test func anInvalidRequestNeitherFailsOverNorCountsAgainstTheCircuit() async throws {
        let a = ScriptedProvider("a") { _ in .invalidRequest("authorize failed (GW_E_INVALID_REQUEST): instrument.token is missing") }
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), b)])
        for _ in 0..<8 {
            let attempt = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada"))
            #expect(attempt.status == .failed && attempt.providerID == "a")
            #expect(attempt.problem?.code == .invalidRequest && attempt.problem?.retryable == false)
        }
        #expect(b.calls.isEmpty)
        #expect(f.checkout.circuitStates()["a"] == .closed)
    }

    @Test func aRealDeclineNeverFailsOver() async throws {
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), Self.decline(safe: false)), (profile("b", priority: 2), b)])
        let attempt = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada"))
        #expect(attempt.status == .failed && attempt.providerID == "a")
        #expect(b.calls.isEmpty)
    }

    @Test func anUnknownOutcomeStaysPendingAndTheSecondProviderIsNeverCalled() async throws {
        let a = ScriptedProvider("a") { call in
            if case .authorize = call { return .unknown("authorize timed out: outcome unknown") }
            return .answered(ScriptedProvider.success(call))
        }
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), b)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.status == .pending && attempt.providerID == "a")
        #expect(attempt.problem?.code == .networkError)
        #expect(b.calls.isEmpty)
        // No new attempt may start while the outcome is unknown.
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "visa")) } throws: {
            ($0 as? Problem)?.code == .invalidState
        }
        #expect(b.calls.isEmpty)
        // Reconciliation verifies it with a, and only a.
        f.clock.advance(2)
        let pass = await Reconciler(checkout: f.checkout).runPass()
        #expect(pass.verified == 1)
        #expect(try await f.checkout.session(session.id).session.attempts.map(\.status) == [.succeeded])
        #expect(a.count(.verify) == 1 && b.calls.isEmpty)
    }

    @Test func disabledProvidersAreNeverRoutedEvenWhenPinned() async throws {
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a")), (profile("b", priority: 0, enabled: false), b)])
        let session = try await f.session()
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "b")) } throws: {
            ($0 as? Problem)?.code == .methodUnavailable && ($0 as? Problem)?.detail.contains("b: disabled") == true
        }
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.providerID == "a")
        #expect(b.calls.isEmpty)
    }

    @Test func anOpenCircuitSkipsTheProvider() async throws {
        let a = ScriptedProvider("a") { _ in .notSent("connection refused") }
        let b = ScriptedProvider.approving("b")
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), b)])
        for _ in 0..<5 { _ = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada")) }
        #expect(a.count(.authorize) == 5)
        #expect(f.checkout.circuitStates()["a"] == .open)
        let attempt = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada"))
        #expect(attempt.providerID == "b" && attempt.routingReason.contains("candidate 1 of 1"))
        #expect(a.count(.authorize) == 5)
    }
}

@Suite struct EngineIdempotencyTests {
    @Test func hundredConcurrentIdenticalAttemptsMakeOneAdapterCall() async throws {
        let a = ScriptedProvider("a") { call in
            try? await Task.sleep(for: .milliseconds(20))
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "pay-1").id }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(a.count(.authorize) == 1)
    }

    @Test func sameKeyOtherRequestIsAConflictAndTheAnswerSurvivesARestart() async throws {
        let a = ScriptedProvider.approving("a")
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k")
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "visa"), idempotencyKey: "k") } throws: {
            ($0 as? Problem)?.code == .idempotencyConflict && ($0 as? Problem)?.status == 409
        }
        // A new engine on the same store: the answer is replayed, with no call.
        let restarted = try EngineFixture([(profile("a", priority: 1), a)], store: f.store)
        let replay = try await restarted.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k")
        #expect(replay == first)
        #expect(a.count(.authorize) == 1)
    }

    /// A retry under an attempt's key answers from the key, whatever became
    /// of the session since: one whose session has expired gets the first
    /// answer (not "session expired"), and one made on another engine while
    /// the first try is still inside its provider call gets that attempt as
    /// it is, never a second one.
    @Test func anAttemptsRetryAnswersFromItsKeyWhateverTheSessionBecame() async throws {
        let declined = ScriptedProvider("a") { _ in
            .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .cardDeclined, message: "declined", retryable: false)))
        }
        let f = try EngineFixture([(profile("a", priority: 1), declined)])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k-expired")
        #expect(first.status == .failed)
        f.clock.advance(3 * 3600)
        // Another engine (no cached session) on the same store: the session is past its expiry, the key answers.
        let other = try EngineFixture([(profile("a", priority: 1), declined)], store: f.store)
        other.clock.advance(3 * 3600)
        let replay = try await other.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k-expired")
        #expect(replay == first)
        #expect(declined.count(.authorize) == 1)

        // A try held inside its provider call (its intent written) on one engine; the same request on another engine resumes it.
        let gate = Shared<CheckedContinuation<Void, Never>?>(nil)
        let entered = AsyncStream<Void>.makeStream()
        let held = ScriptedProvider("b") { call in
            entered.continuation.yield()
            await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            return .answered(ScriptedProvider.success(call))
        }
        let g = try EngineFixture([(profile("b", priority: 1), held)])
        let h = try EngineFixture([(profile("b", priority: 1), held)], store: g.store)
        let open = try await g.session()
        let running = Task { try await g.checkout.attempt(session: open.id, NewAttempt(method: "mada"), idempotencyKey: "k-held") }
        var iterator = entered.stream.makeAsyncIterator()
        await iterator.next()
        let resumed = try await h.checkout.attempt(session: open.id, NewAttempt(method: "mada"), idempotencyKey: "k-held")
        #expect(resumed.status == .processing, "the other engine's try, as it now is")
        #expect(held.count(.authorize) == 1, "never a second attempt under the key")
        while gate.withLock({ $0 == nil }) { await Task.yield() }
        gate.withLock { $0?.resume(); $0 = nil }
        let finished = try await running.value
        #expect(finished.id == resumed.id && finished.status == .succeeded)
        #expect(held.count(.authorize) == 1)
    }

    /// Each engine caches the sessions it committed; another engine (another
    /// process) on the same store changing one must never be hidden by it.
    @Test func aSessionChangedByAnotherEngineIsReadAfresh() async throws {
        let a = ScriptedProvider.approving("a")
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let other = try EngineFixture([(profile("a", priority: 1), a)], store: f.store)
        let session = try await f.session()
        #expect(try await f.checkout.session(session.id).session.status == .open)
        _ = try await other.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        // The first engine's cached copy is still open; the store's is completed.
        let seen = try await f.checkout.session(session.id).session
        #expect(seen.status == .completed)
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada")) } throws: {
            ($0 as? Problem)?.code == .invalidState
        }
        #expect(a.count(.authorize) == 1)
    }

    /// An attempt starts from the engine's cached copy without asking the
    /// store first; a copy another engine made stale is refused by the first
    /// commit, before any provider call, and the attempt runs again from the
    /// store's copy: nothing lost, nothing sent twice.
    @Test func anAttemptFromAStaleCachedSessionRunsAgainFromTheStoresCopy() async throws {
        let declineFirst = Shared(true)
        let a = ScriptedProvider("a") { call in
            if case .authorize = call, declineFirst.withLock({ let v = $0; $0 = false; return v }) {
                return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .cardDeclined, message: "05", retryable: false)))
            }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let other = try EngineFixture([(profile("a", priority: 1), a)], store: f.store)
        let session = try await f.session()
        // Another engine declines one attempt: the session is still open, one version on.
        let declined = try await other.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(declined.status == .failed)
        let paid = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "pay-1")
        #expect(paid.status == .succeeded)
        let stored = try await f.store.session(session.id)
        #expect(stored?.attempts.map(\.status) == [.failed, .succeeded] && stored?.status == .completed)
        #expect(a.count(.authorize) == 2, "the stale try reached no provider")

        // Completed by the other engine meanwhile: refused, and no provider called.
        let second = try await f.session()
        _ = try await other.checkout.attempt(session: second.id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.attempt(session: second.id, NewAttempt(method: "mada")) } throws: {
            ($0 as? Problem)?.code == .invalidState
        }
        #expect(a.count(.authorize) == 3)
    }

    @Test func anUnknownCaptureIsNotRememberedAndItsRetrySendsTheSameProviderKey() async throws {
        let firstCapture = Shared(true)
        let a = ScriptedProvider("a") { call in
            if case .capture = call, firstCapture.withLock({ let v = $0; $0 = false; return v }) { return .unknown("capture timed out") }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session(1000, capture: .manual)
        let payment = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(payment.status == .authorized)
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 600, idempotencyKey: "cap-1") } throws: {
            ($0 as? Problem)?.code == .outcomeUnknown && ($0 as? Problem)?.retryable == true
        }
        let change = try await f.checkout.capture(payment: payment.id, amount: 600, idempotencyKey: "cap-1")
        #expect(change.balance.captured == 600)
        let keys = a.keys(.capture)
        #expect(keys.count == 2 && keys[0] == keys[1])
        // Replayed now, not sent again.
        #expect(try await f.checkout.capture(payment: payment.id, amount: 600, idempotencyKey: "cap-1") == change)
        #expect(a.count(.capture) == 2)
    }
}

@Suite struct PaymentOperationTests {
    @Test func captureRefundAndVoidFollowTheBalance() async throws {
        let a = ScriptedProvider.approving("a")
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session(1000, capture: .manual)
        let payment = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        _ = try await f.checkout.capture(payment: payment.id, amount: 700, idempotencyKey: "op-1")
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 301, idempotencyKey: "op-2") } throws: { ($0 as? Problem)?.code == .invalidRequest }
        await #expect { try await f.checkout.void(payment: payment.id, idempotencyKey: "op-3") } throws: { ($0 as? Problem)?.code == .invalidState }
        _ = try await f.checkout.refund(payment: payment.id, amount: 200, idempotencyKey: "op-4")
        let last = try await f.checkout.refund(payment: payment.id, idempotencyKey: "op-5")
        #expect(last.amount?.value == 500 && last.balance.refundable == 0)
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 1, idempotencyKey: "op-6") } throws: { ($0 as? Problem)?.code == .invalidRequest }
        #expect(a.count(.refund) == 2)
        let types = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(types.filter { !$0.rawValue.hasSuffix("_sent") }.suffix(3) == ["payment.captured", "payment.refunded", "payment.refunded"])
        #expect(types.filter { $0.rawValue.hasSuffix("_sent") }.count == 3, "each operation is recorded before it is sent")
    }

    @Test func aProviderDeclineOfARefundChangesNoBalance() async throws {
        let a = ScriptedProvider("a") { call in
            if case .refund = call { return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: "refund_refused", message: "too old", retryable: false))) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let payment = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 100, idempotencyKey: "op-7") } throws: { ($0 as? Problem)?.code == "refund_refused" }
        #expect(try await f.checkout.session(session.id).session.attempts[0].balance?.refunded == 0)
    }

    @Test func aRefundPendingAtTheProviderHoldsItsAmountSoNoOtherKeyCanRefundItAgain() async throws {
        let settled = Shared(false)
        let a = ScriptedProvider("a") { call in
            if case .refund = call, !settled.withLock({ $0 }) { return .answered(AdapterResult(status: .pending, providerReference: "rf")) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(1000).id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 1000, idempotencyKey: "r1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        // One money-moving operation per payment at a time: another key waits until r1 is settled.
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 1000, idempotencyKey: "r2") } throws: { ($0 as? Problem)?.code == .operationInProgress }
        settled.withLock { $0 = true }
        let done = try await f.checkout.refund(payment: payment.id, amount: 1000, idempotencyKey: "r1")
        #expect(done.balance.refunded == 1000 && done.balance.inFlight.isEmpty)
        #expect(a.count(.refund) == 2)
    }

    @Test func movingMoneyWithoutAnIdempotencyKeyIsRefused() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        let payment = try await f.checkout.attempt(session: try await f.session().id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 1) } throws: {
            ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail.contains("idempotency key") == true
        }
    }

    @Test func unknownIDsAreNotFound() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        await #expect { try await f.checkout.session("ses_nope") } throws: { ($0 as? Problem)?.status == 404 }
        await #expect { try await f.checkout.refund(payment: "att_nope", idempotencyKey: "op-8") } throws: { ($0 as? Problem)?.status == 404 }
    }
}

@Suite struct ReconciliationTests {
    @Test func anAttemptLeftProcessingByACrashIsPickedUpOnceItsLeaseEnds() async throws {
        let a = ScriptedProvider.approving("a")
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        // What a crash leaves: the attempt committed as processing, no answer.
        var session = try await f.session()
        var attempt = Attempt(id: "att_crashed", method: "mada", providerID: "a", routingReason: "test", requested: session.amount, at: f.clock.now)
        attempt.leaseUntil = f.clock.now.addingTimeInterval(8)
        try session.start(attempt)
        _ = try await f.store.commit(StoreChange(session: session, events: []))
        let reconciler = Reconciler(checkout: f.checkout)
        #expect(await reconciler.runPass() == Reconciler.Pass())
        #expect(a.calls.isEmpty)
        f.clock.advance(9)
        #expect(await reconciler.runPass().verified == 1)
        let after = try await f.checkout.session(session.id).session
        #expect(after.attempts[0].status == .succeeded && after.status == .completed)
        let types = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(types == ["session.created", "attempt.interrupted", "attempt.succeeded", "session.completed"])
    }

    @Test func pendingAttemptsAreVerifiedOnABackoffSchedule() async throws {
        let verifies = Shared(0)
        let a = ScriptedProvider("a") { call in
            switch call {
            case .authorize(let r): return .answered(AdapterResult(status: .pending, providerReference: "r-\(r.paymentId)"))
            case .verify: return verifies.withLock { $0 += 1; return $0 } < 3
                ? .answered(AdapterResult(status: .pending, providerReference: "r")) : .answered(AdapterResult(status: .succeeded, providerReference: "r"))
            default: return .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        _ = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        let reconciler = Reconciler(checkout: f.checkout)
        // backoff [1, 2, 4]: due at +1, then +2 after that, then +4.
        f.clock.advance(1)
        #expect(await reconciler.runPass().verified == 1)
        f.clock.advance(1)
        #expect(await reconciler.runPass().verified == 0)
        f.clock.advance(1)
        #expect(await reconciler.runPass().verified == 1)
        f.clock.advance(4)
        #expect(await reconciler.runPass().verified == 1)
        #expect(try await f.checkout.session(session.id).session.status == .completed)
        #expect(a.count(.verify) == 3)
    }

    @Test func abandonedSessionsExpireAndAcceptNoAttempt() async throws {
        let f = try EngineFixture([(profile("a", priority: 1), .approving("a"))])
        let session = try await f.session()
        f.clock.advance(31 * 60)
        #expect(await Reconciler(checkout: f.checkout).runPass().expired == 1)
        #expect(try await f.checkout.session(session.id).session.status == .expired)
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada")) } throws: {
            ($0 as? Problem)?.code == .sessionExpired
        }
    }

    @Test func verifiedWebhooksApplyOnceAndForgedOnesChangeNothing() async throws {
        let a = ScriptedProvider("a", webhook: { request in
            guard request.headers["x-signature"] == "good" else { return WebhookResult(verified: false) }
            let paymentID = String(decoding: Data(base64Encoded: request.body) ?? Data(), as: UTF8.self)
            return WebhookResult(verified: true, eventId: "evt-1", paymentId: paymentID, providerReference: "r", status: .succeeded)
        }) { call in
            if case .authorize(let r) = call { return .answered(AdapterResult(status: .pending, providerReference: "r-\(r.paymentId)")) }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.webhook(provider: "a", headers: ["X-Signature": "forged"], body: Data(attempt.id.utf8)) } throws: {
            ($0 as? Problem)?.status == 401
        }
        #expect(try await f.checkout.session(session.id).session.attempts[0].status == .pending)
        let applied = try await f.checkout.webhook(provider: "a", headers: ["X-Signature": "good"], body: Data(attempt.id.utf8))
        #expect(applied == .applied(AttemptRef(sessionID: session.id, attemptID: attempt.id)))
        #expect(try await f.checkout.session(session.id).session.status == .completed)
        #expect(try await f.checkout.webhook(provider: "a", headers: ["X-Signature": "good"], body: Data(attempt.id.utf8)) == .duplicate)
    }
}

@Suite struct EventStreamTests {
    @Test func theStreamReplaysHistoryThenDeliversLiveTransitionsInOrder() async throws {
        let a = ScriptedProvider("a") { call in
            switch call {
            case .authorize: .answered(AdapterResult(status: .pending, providerReference: "r", action: PaymentAction(type: .redirect, url: "https://x.invalid")))
            default: .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        let events = try await f.checkout.events(ofSession: session.id)
        let collector = Task {
            var seen: [SessionEvent] = []
            for try await event in events {
                seen.append(event)
                if event.type == .sessionCompleted { break }
            }
            return seen
        }
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        _ = try await f.checkout.proceed(session: session.id, attempt: attempt.id, PayerInput(returnParams: ["status": "ok"]))
        let seen = try await collector.value
        #expect(seen.map(\.type) == ["session.created", "attempt.started", "attempt.pending", "attempt.succeeded", "session.completed"])
        #expect(seen.map(\.sequence) == Array(1...Int64(seen.count)), "a session's events are numbered 1, 2, 3, ...")
    }
}
