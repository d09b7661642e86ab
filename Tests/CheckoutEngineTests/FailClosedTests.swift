import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Synchronization
import Testing
import TestSupport

@Suite struct FailClosedTests {
    func liveProfile(_ id: String, priority: Int) -> ProviderProfile {
        var p = profile(id, priority: priority)
        p.mode = .live
        return p
    }

    // MARK: Finding 2: the mock was a live fallback

    @Test func aTestProviderNeverServesOrBacksUpALiveSession() async throws {
        let live = ScriptedProvider("hyperpay") { _ in .notSent("HTTP 503 before the checkout was prepared") }
        let mock = ScriptedProvider.approving("mock")
        let f = try EngineFixture([(liveProfile("hyperpay", priority: 100), live), (profile("mock", priority: 1000), mock)])
        let session = try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"), mode: .live)
        #expect(session.session.mode == .live)
        // Past the circuit's threshold: the live provider's circuit opens, and the mock still never serves.
        for _ in 0..<8 {
            let attempt = try? await f.checkout.attempt(session: session.session.id, NewAttempt(method: "mada"))
            #expect(attempt == nil || attempt?.status == .failed)
        }
        #expect(live.count(.authorize) >= 5)
        #expect(mock.calls.isEmpty, "a test provider was called for a live session")
        #expect(try await f.checkout.session(session.session.id).session.attempts.allSatisfy { $0.providerID == "hyperpay" })
        #expect(f.checkout.availableMethods(for: try await f.checkout.session(session.session.id).session).isEmpty)
    }

    @Test func aLiveSessionWithOnlyTestProvidersListsNoMethodsAndAnAttemptNamesTheMode() async throws {
        let mock = ScriptedProvider.approving("mock")
        let f = try EngineFixture([(profile("mock", priority: 1000), mock)])
        let live = try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"), mode: .live)
        #expect(live.availableMethods.isEmpty)
        await #expect { try await f.checkout.attempt(session: live.session.id, NewAttempt(method: "mada")) } throws: {
            let p = $0 as? Problem
            return p?.code == .methodUnavailable && p?.detail.contains("live") == true
        }
        let pinned = NewAttempt(method: "mada", provider: "mock")
        await #expect(throws: Problem.self) { try await f.checkout.attempt(session: live.session.id, pinned) }
        #expect(mock.calls.isEmpty)
        let test = try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-2"), mode: .test)
        #expect(test.availableMethods == ["mada", "visa"])
    }

    @Test func aCallerSeesOnlySessionsOfItsModeAndKeysDoNotCrossModes() async throws {
        let f = try EngineFixture([(profile("mock", priority: 1), .approving("mock")), (liveProfile("live", priority: 1), .approving("live"))])
        let request = NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1")
        let test = try await f.checkout.createSession(request, idempotencyKey: "same", mode: .test)
        let live = try await f.checkout.createSession(request, idempotencyKey: "same", mode: .live)
        #expect(test.session.id != live.session.id, "one key in two modes is two requests")
        await #expect { try await f.checkout.session(live.session.id, mode: .test) } throws: { ($0 as? Problem)?.code == .notFound }
        let payment = try await f.checkout.attempt(session: live.session.id, NewAttempt(method: "mada"), mode: .live)
        #expect(payment.providerID == "live")
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 10, idempotencyKey: "r", mode: .test) } throws: { ($0 as? Problem)?.code == .notFound }
    }

    // MARK: Finding 4: the key was bound only with an answer

    @Test func aRetryUnderTheSameKeyWithAnotherAmountAfterAnUnknownOutcomeIsAConflict() async throws {
        let books = ProviderBooks()
        let drop = Shared(true)
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .refund = call, drop.withLock({ $0 }) { return .unknown("connection reset after the request was sent") }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(5000).id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 1000, idempotencyKey: "r1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 2000, idempotencyKey: "r1") } throws: { ($0 as? Problem)?.code == .idempotencyConflict }
        #expect(a.count(.refund) == 1, "the conflicting retry must never reach the provider")
        drop.withLock { $0 = false }
        let settled = try await f.checkout.refund(payment: payment.id, amount: 1000, idempotencyKey: "r1")
        #expect(settled.balance.refunded == 1000 && settled.balance.inFlight.isEmpty)
        #expect(books.payment(payment.id)?.refunded == 1000)
    }

    @Test func aKeyIsBoundToItsRequestEvenWhenTheFirstTrySentNothing() async throws {
        let calls = Shared(0)
        let a = ScriptedProvider("a") { call in
            if case .authorize = call, calls.withLock({ $0 += 1; return $0 }) == 1 { return .notSent("unreachable") }
            return .answered(ScriptedProvider.success(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let session = try await f.session()
        #expect(try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k").status == .failed)
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "visa"), idempotencyKey: "k") } throws: { ($0 as? Problem)?.code == .idempotencyConflict }
    }

    @Test func aPendingAttemptRetriedUnderItsKeyIsReturnedAsItNowIsNeverStartedAgain() async throws {
        let books = ProviderBooks()
        let lose = Shared(true)
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .authorize = call, lose.withLock({ $0 }) { return .unknown("timed out") }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a), (profile("b", priority: 2), .approving("b"))])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k")
        #expect(first.status == .pending)
        let again = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k")
        #expect(again.id == first.id && again.status == .pending)
        lose.withLock { $0 = false }
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        let settled = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: "k")
        #expect(settled.id == first.id && settled.status == .succeeded)
        #expect(a.count(.authorize) == 1 && books.payments.count == 1)
    }

    // MARK: Finding 5: held amounts were never reconciled

    @Test func anUnknownCaptureIsSettledByReconciliationAndItsKeyReplaysTheOutcome() async throws {
        let books = ProviderBooks()
        let lose = Shared(true)
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .capture = call, lose.withLock({ $0 }) { return .unknown("connection reset after the request was sent") }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(3000, capture: .manual).id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "c1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        // What ops read (GET /v1/payments/{id}): held, why, and when it is next checked.
        var balance = try #require(try await f.checkout.payment(payment.id).balance)
        let held = try #require(balance.inFlight.values.first)
        #expect(balance.inFlight.count == 1 && held.reason?.contains("unknown") == true && held.amount == 1000)
        #expect(held.nextCheckAt.map { $0 > f.clock.now } == true && held.requestKey != nil)
        lose.withLock { $0 = false }
        f.clock.advance(60)
        let pass = await Reconciler(checkout: f.checkout).runPass()
        #expect(pass.verified == 1)
        balance = try #require(try await f.checkout.session(ofPayment: payment.id).session.attempts[0].balance)
        #expect(balance.inFlight.isEmpty && balance.captured == 1000)
        #expect(books.payment(payment.id)?.captured == 1000)
        let replay = try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "c1")
        #expect(replay.balance.captured == 1000)
        #expect(a.count(.capture) == 2, "the first try and reconciliation's, under one provider key; the replay calls nobody")
        #expect(Set(a.keys(.capture)).count == 1)
    }

    @Test func aRetryThatCouldNotBeSentSaysNothingOfTheFirstTryAndKeepsTheHold() async throws {
        let books = ProviderBooks()
        let tries = Shared(0)
        let a = ScriptedProvider("a") { call in
            guard case .capture = call else { return .answered(books.act(call)) }
            switch tries.withLock({ $0 += 1; return $0 }) {
            case 1:
                _ = books.act(call)
                return .unknown("answer lost after the provider captured")
            case 2: return .notSent("provider unreachable this time")
            default: return .answered(books.act(call))
            }
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(3000, capture: .manual).id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "c1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "c1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        var balance = try #require(try await f.checkout.session(ofPayment: payment.id).session.attempts[0].balance)
        #expect(balance.inFlight.count == 1, "the first try may have captured: its hold must stay")
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        balance = try #require(try await f.checkout.session(ofPayment: payment.id).session.attempts[0].balance)
        #expect(balance.captured == 1000 && balance.inFlight.isEmpty && books.payment(payment.id)?.captured == 1000)
    }

    @Test func aRefundPendingAtTheProviderIsSettledByReconciliation() async throws {
        let books = ProviderBooks()
        let pending = Shared(true)
        let a = ScriptedProvider("a") { call in
            if case .refund = call, pending.withLock({ $0 }) { return .answered(AdapterResult(status: .pending)) }
            return .answered(books.act(call))
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(3000).id, NewAttempt(method: "mada"))
        await #expect { try await f.checkout.refund(payment: payment.id, amount: 500, idempotencyKey: "r1") } throws: { ($0 as? Problem)?.code == .outcomeUnknown }
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        #expect(try await f.checkout.session(ofPayment: payment.id).session.attempts[0].balance?.inFlight.count == 1, "still pending: still held")
        pending.withLock { $0 = false }
        f.clock.advance(3600)
        await Reconciler(checkout: f.checkout).runPass()
        let balance = try #require(try await f.checkout.session(ofPayment: payment.id).session.attempts[0].balance)
        #expect(balance.inFlight.isEmpty && balance.refunded == 500 && books.payment(payment.id)?.refunded == 500)
    }

    @Test func aHoldLeftByACrashedEngineIsPickedUpOnceItsLeaseEnds() async throws {
        let books = ProviderBooks()
        let store = try SQLiteCheckoutStore.inMemory()
        let hang = Shared(true)
        let released = AsyncStream<Void>.makeStream()
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .void = call, hang.withLock({ $0 }) {
                // The engine that sent it "crashes": its call never returns while the test goes on.
                for await _ in released.stream {}
                return .unknown("the engine was gone")
            }
            return .answered(result)
        }
        let crashed = try EngineFixture([(profile("a", priority: 1), a)], store: store)
        let payment = try await crashed.checkout.attempt(session: try await crashed.session(2000, capture: .manual).id, NewAttempt(method: "mada"))
        let orphan = Task { try? await crashed.checkout.void(payment: payment.id, idempotencyKey: "v1") }
        // Wait for the event: the void's intent and hold are committed before the provider hears of it.
        while a.count(.void) == 0 { await Task.yield() }
        hang.withLock { $0 = false }
        let restarted = try EngineFixture([(profile("a", priority: 1), a)], store: store)
        restarted.clock.advance(1)
        #expect(await Reconciler(checkout: restarted.checkout).runPass().verified == 0, "not before its lease ends")
        restarted.clock.advance(120)
        await Reconciler(checkout: restarted.checkout).runPass()
        let balance = try #require(try await restarted.checkout.session(ofPayment: payment.id).session.attempts[0].balance)
        #expect(balance.voided && balance.inFlight.isEmpty && books.payment(payment.id)?.voided == true)
        let replay = try await restarted.checkout.void(payment: payment.id, idempotencyKey: "v1")
        #expect(replay.balance.voided)
        released.continuation.finish()
        await orphan.value
    }

    // MARK: Finding 6: overlapping partial captures

    @Test func aSecondCaptureWaitsUntilTheFirstIsSettledSoNothingIsInferredFromTotals() async throws {
        let books = ProviderBooks()
        let lose = Shared(true)
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .capture = call, lose.withLock({ $0 }) { return .unknown("answer lost") }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(3000, capture: .manual).id, NewAttempt(method: "mada"))
        await #expect(throws: Problem.self) { try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "A") }
        await #expect { try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "B") } throws: { ($0 as? Problem)?.code == .operationInProgress }
        lose.withLock { $0 = false }
        _ = try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "A")
        let b = try await f.checkout.capture(payment: payment.id, amount: 1000, idempotencyKey: "B")
        #expect(b.balance.captured == 2000 && books.payment(payment.id)?.captured == 2000)
    }
}

@Suite struct HeldOperationsTests {
    @Test func opsSeeWhatIsHeldAndWhyUntilItIsSettled() async throws {
        let lose = Shared(true)
        let books = ProviderBooks()
        let a = ScriptedProvider("a") { call in
            let result = books.act(call)
            if case .refund = call, lose.withLock({ $0 }) { return .unknown("timed out after sending") }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(2000).id, NewAttempt(method: "mada"))
        #expect(try await f.checkout.heldOperations().isEmpty)
        _ = try? await f.checkout.refund(payment: payment.id, amount: 700, idempotencyKey: "r1")
        let held = try await f.checkout.heldOperations()
        #expect(held.count == 1)
        #expect(held.first?.operation == .refund && held.first?.amount == Money(value: 700, currency: "SAR"))
        #expect(held.first?.reason.contains("timed out after sending") == true)
        lose.withLock { $0 = false }
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        #expect(try await f.checkout.heldOperations().isEmpty)
    }
}

@Suite struct ProviderTotalsTests {
    /// A manual-capture payment fully captured, or voided, is `succeeded` or
    /// `cancelled` at the provider while its attempt stays `authorized`: a
    /// verify that says so confirms it; a provider that says `succeeded`
    /// after only part was captured is a discrepancy.
    @Test(arguments: ["full capture", "void", "part capture"])
    func aVerifyOfAManualPaymentIsJudgedAgainstItsBooks(_ what: String) async throws {
        let books = ProviderBooks()
        let a = ScriptedProvider("a") { call in
            var result = books.act(call)
            if case .verify(let r) = call, let p = books.payment(r.paymentId) {
                result.status = p.voided ? .cancelled : p.captured > 0 ? .succeeded : .authorized
                result.totals = PaymentTotals(captured: Money(value: p.captured, currency: "SAR"), refunded: Money(value: p.refunded, currency: "SAR"), voided: p.voided)
            }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(2000, capture: .manual).id, NewAttempt(method: "mada"))
        switch what {
        case "full capture": _ = try await f.checkout.capture(payment: payment.id, amount: 2000, idempotencyKey: "c")
        case "part capture": _ = try await f.checkout.capture(payment: payment.id, amount: 500, idempotencyKey: "c")
        default: _ = try await f.checkout.void(payment: payment.id, idempotencyKey: "v")
        }
        _ = try await f.checkout.verify(attempt: payment.id)
        let session = try await f.checkout.session(ofPayment: payment.id).session
        let types = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        if what == "part capture" {
            #expect(types.contains("attempt.discrepancy"), "\(types)")
        } else {
            #expect(types.contains("attempt.confirmed") && !types.contains("attempt.discrepancy"), "\(what): \(types)")
        }
    }

    @Test func aVerifyWhoseTotalsDisagreeWithTheBooksIsRecordedAsADiscrepancy() async throws {
        let books = ProviderBooks()
        let a = ScriptedProvider("a") { call in
            var result = books.act(call)
            if case .verify(let r) = call, let p = books.payment(r.paymentId) {
                // The provider reports one more capture than the host ever sent.
                result.totals = PaymentTotals(captured: Money(value: p.captured + 100, currency: "SAR"), refunded: Money(value: p.refunded, currency: "SAR"), voided: p.voided)
            }
            return .answered(result)
        }
        let f = try EngineFixture([(profile("a", priority: 1), a)])
        let payment = try await f.checkout.attempt(session: try await f.session(2000, capture: .manual).id, NewAttempt(method: "mada"))
        _ = try await f.checkout.capture(payment: payment.id, amount: 500, idempotencyKey: "c")
        _ = try await f.checkout.verify(attempt: payment.id)
        let session = try await f.checkout.session(ofPayment: payment.id).session
        let events = try await f.store.events(ofSession: session.id, after: 0)
        let discrepancy = try #require(events.first { $0.type == .paymentDiscrepancy })
        #expect(discrepancy.detail?.contains("captured 600") == true && discrepancy.detail?.contains("captured 500") == true)
    }
}
