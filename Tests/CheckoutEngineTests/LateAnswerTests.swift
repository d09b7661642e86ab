import CheckoutEngine
import Foundation
import GatewayPayloads
import Synchronization
import TestSupport
import Testing

/// A provider acts on its own clock. Absence is not proof: a verify that
/// finds nothing right after a timeout keeps the attempt pending until the
/// provider's absence window ends; and a charge found on an attempt the host
/// had recorded as failed is acted on, never only logged.
@Suite struct LateAnswerTests {
    /// A provider whose authorize times out while it records the payment
    /// only when the test says so: until then its verify finds nothing.
    final class SlowProvider: Sendable {
        let charged = Shared(false)
        let authorizes = Shared(0)
        let provider: ScriptedProvider

        init() {
            let charged = charged, authorizes = authorizes
            provider = ScriptedProvider("slow") { call in
                switch call {
                case .authorize:
                    authorizes.withLock { $0 += 1 }
                    return .unknown("no answer within the call's timeout")
                case .verify(let r):
                    guard charged.withLock({ $0 }) else {
                        return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .unknownPayment, message: "no such payment", retryable: false)))
                    }
                    return .answered(AdapterResult(status: .succeeded, providerReference: "slow-\(r.paymentId)", amount: Money(value: 1000, currency: "SAR")))
                default:
                    return .answered(ScriptedProvider.success(call))
                }
            }
        }
    }

    func slowProfile(window: TimeInterval) -> ProviderProfile {
        var p = profile("slow", priority: 1)
        p.absenceWindow = window
        return p
    }

    /// The case: the authorize times out, a verify right after finds
    /// nothing, the provider charges seconds later. The attempt stays
    /// pending through the window (no second attempt can start, so the payer
    /// is never charged twice), and the charge completes the session.
    @Test func aVerifyThatFindsNothingWithinTheWindowKeepsTheAttemptPending() async throws {
        let slow = SlowProvider()
        let f = try EngineFixture([(slowProfile(window: 900), slow.provider)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(attempt.status == .pending)

        f.clock.advance(0.02)
        let early = try await f.checkout.verify(attempt: attempt.id)
        #expect(early.status == .pending, "absence right after a timeout was taken as proof: \(early.status)")
        #expect(early.problem?.detail.contains("absence_window_s") == true, "\(String(describing: early.problem))")
        await #expect(throws: Problem.self, "a second attempt started while the first may still be charged") {
            try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        }
        #expect(slow.authorizes.withLock { $0 } == 1)

        // The provider records it and charges; reconciliation finds the charge.
        slow.charged.withLock { $0 = true }
        f.clock.advance(120)
        await Reconciler(checkout: f.checkout).runPass()
        let paid = try await f.checkout.session(session.id).session
        #expect(paid.status == .completed && paid.attempts.count == 1 && paid.attempts[0].status == .succeeded, "\(paid.attempts.map(\.status))")
        let events = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(events.contains("attempt.not_found_yet") && events.contains("session.completed"), "\(events)")
    }

    /// Past the window, absence is final; a window of 0 makes it final at once.
    @Test(arguments: [(900.0, 901.0), (0.0, 0.0)])
    func pastTheWindowAbsenceIsFinal(_ window: TimeInterval, _ wait: TimeInterval) async throws {
        let slow = SlowProvider()
        let f = try EngineFixture([(slowProfile(window: window), slow.provider)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        f.clock.advance(wait)
        let verified = try await f.checkout.verify(attempt: attempt.id)
        #expect(verified.status == .failed && verified.problem?.code == .unknownPayment, "\(verified.status) \(String(describing: verified.problem))")
    }

    /// The provider charged after the host recorded the attempt failed (past
    /// the window, or a notification after a decline): with the session
    /// still unpaid, the attempt becomes its payment and the session completes.
    @Test func aLateChargeOnAnUnpaidSessionCompletesIt() async throws {
        let slow = SlowProvider()
        let f = try EngineFixture([(slowProfile(window: 0), slow.provider)])
        let session = try await f.session()
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(try await f.checkout.verify(attempt: attempt.id).status == .failed)

        slow.charged.withLock { $0 = true }
        let late = try await f.checkout.verify(attempt: attempt.id)
        #expect(late.status == .succeeded && late.balance?.captured == 1000, "\(late)")
        let paid = try await f.checkout.session(session.id).session
        #expect(paid.status == .completed)
        let events = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(events.suffix(2) == ["attempt.late_charge", "session.completed"], "\(events)")
    }

    /// The provider charged the first attempt after the host gave up on it
    /// and the payer paid again through another: the late charge is
    /// reversed (a refund under its own key) by reconciliation, held until
    /// settled, and the payer is charged once in the end.
    @Test func aLateChargeOnAPaidSessionIsRefundedByReconciliation() async throws {
        let slow = SlowProvider()
        let other = ScriptedProvider.approving("other")
        var second = profile("other", priority: 2)
        second.absenceWindow = 900
        let f = try EngineFixture([(slowProfile(window: 0), slow.provider), (second, other)])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "slow"))
        #expect(try await f.checkout.verify(attempt: first.id).status == .failed)
        let paid = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "other"))
        #expect(paid.status == .succeeded)

        slow.charged.withLock { $0 = true }
        let late = try await f.checkout.verify(attempt: first.id)
        #expect(late.status == .succeeded)
        #expect(late.balance?.inFlight["\(first.id):late-charge-reversal"]?.operation == .refund, "\(String(describing: late.balance))")
        let events = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(events.suffix(2) == ["attempt.late_charge", "payment.refund_held"], "\(events)")

        // Reconciliation sends the refund under its key; the provider confirms it.
        await Reconciler(checkout: f.checkout).runPass()
        let settled = try await f.checkout.session(session.id).session
        let reversed = try settled.attempt(first.id)
        #expect(reversed.balance?.refunded == 1000 && reversed.balance?.inFlight.isEmpty == true, "\(String(describing: reversed.balance))")
        #expect(slow.provider.keys(.refund) == ["\(first.id):late-charge-reversal"], "refunded once, under its own key")
        #expect(try settled.attempt(paid.id).status == .succeeded && settled.status == .completed)
        let refunds = (try await f.store.events(ofSession: session.id, after: 0)).filter { $0.type == .paymentRefunded }
        #expect(refunds.count == 1 && refunds.first?.attemptID == first.id)
    }

    /// A late charge completes the session while another attempt is still
    /// live; when that one succeeds too, it is the second payment, and it is
    /// reversed: one payment per session, whichever order the answers come in.
    @Test func anAttemptThatSucceedsAfterALateChargePaidTheSessionIsReversed() async throws {
        let slow = SlowProvider()
        let succeeds = Shared(false)
        let later = ScriptedProvider("later") { call in
            switch call {
            case .authorize(let r):
                return .answered(AdapterResult(status: .pending, providerReference: "later-\(r.paymentId)",
                                               action: PaymentAction(type: .redirect, url: "https://later.example/pay", method: "GET")))
            case .verify(let r) where succeeds.withLock({ $0 }):
                return .answered(AdapterResult(status: .succeeded, providerReference: r.providerReference, amount: Money(value: 1000, currency: "SAR")))
            case .verify(let r):
                return .answered(AdapterResult(status: .pending, providerReference: r.providerReference))
            default:
                return .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(slowProfile(window: 0), slow.provider), (profile("later", priority: 2), later)])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "slow"))
        #expect(try await f.checkout.verify(attempt: first.id).status == .failed)
        let second = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "later"))
        #expect(second.status == .pending)

        slow.charged.withLock { $0 = true }
        #expect(try await f.checkout.verify(attempt: first.id).status == .succeeded)
        #expect(try await f.checkout.session(session.id).session.status == .completed)

        succeeds.withLock { $0 = true }
        let paidToo = try await f.checkout.verify(attempt: second.id)
        #expect(paidToo.status == .succeeded && paidToo.balance?.inFlight[second.id + ":late-charge-reversal"]?.operation == .refund,
                "a second payment kept: \(String(describing: paidToo.balance))")
        await Reconciler(checkout: f.checkout).runPass()
        let settled = try await f.checkout.session(session.id).session
        #expect(try settled.attempt(second.id).balance?.refunded == 1000 && settled.attempt(first.id).balance?.refunded == 0)
        #expect(later.keys(.refund) == [second.id + ":late-charge-reversal"])
    }

    /// The reversal is the payer's money: a provider that refuses it does
    /// not release it (as a merchant's own refund would be); it stays held
    /// and is sent again, under the same key, until it lands.
    @Test func aRefusedReversalStaysHeldAndIsSentAgain() async throws {
        let refusals = Shared(1)
        let slow = SlowProvider()
        let refusing = ScriptedProvider("slow") { call in
            if case .refund = call, refusals.withLock({ count in defer { count -= 1 }; return count > 0 }) {
                return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .providerError, message: "refund declined for now", retryable: true)))
            }
            return await slow.provider.perform(call)
        }
        let f = try EngineFixture([(slowProfile(window: 0), refusing), (profile("other", priority: 2), .approving("other"))])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "slow"))
        _ = try await f.checkout.verify(attempt: first.id)
        _ = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "other"))
        slow.charged.withLock { $0 = true }
        _ = try await f.checkout.verify(attempt: first.id)

        await Reconciler(checkout: f.checkout).runPass()
        let refused = try (try await f.checkout.session(session.id).session).attempt(first.id)
        #expect(refused.balance?.refunded == 0 && refused.balance?.inFlight.count == 1, "a refused reversal was released: \(String(describing: refused.balance))")
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        let reversed = try (try await f.checkout.session(session.id).session).attempt(first.id)
        #expect(reversed.balance?.refunded == 1000 && reversed.balance?.inFlight.isEmpty == true, "\(String(describing: reversed.balance))")
        #expect(refusing.keys(.refund) == Array(repeating: first.id + ":late-charge-reversal", count: 2))
        let events = try await f.store.events(ofSession: session.id, after: 0).map(\.type)
        #expect(events.contains("payment.refund_refused") && events.last == "payment.refunded", "\(events)")
    }
    /// A reversal refused (the provider says the money is already back: a
    /// refund made by hand meanwhile) is not sent forever: before sending it
    /// again, reconciliation verifies, and the provider's totals settle it.
    @Test func aRefusedReversalThatTheProviderShowsMadeIsSettledByItsTotals() async throws {
        let charged = Shared(false), refundedByHand = Shared(false)
        let provider = ScriptedProvider("slow") { call in
            switch call {
            case .authorize: return .unknown("no answer within the call's timeout")
            case .refund:
                return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .invalidState, message: "nothing left to refund", retryable: false)))
            case .verify(let r):
                guard charged.withLock({ $0 }) else {
                    return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .unknownPayment, message: "no such payment", retryable: false)))
                }
                let refunded = refundedByHand.withLock { $0 } ? 1000 : 0
                return .answered(AdapterResult(status: .succeeded, providerReference: "slow-\(r.paymentId)", amount: Money(value: 1000, currency: "SAR"),
                                               totals: PaymentTotals(captured: Money(value: 1000, currency: "SAR"), refunded: Money(value: Int64(refunded), currency: "SAR"), voided: false)))
            default: return .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(slowProfile(window: 0), provider), (profile("other", priority: 2), .approving("other"))])
        let session = try await f.session()
        let first = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "slow"))
        _ = try await f.checkout.verify(attempt: first.id)
        _ = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "other"))
        charged.withLock { $0 = true }
        _ = try await f.checkout.verify(attempt: first.id)
        await Reconciler(checkout: f.checkout).runPass()
        #expect(try (try await f.checkout.session(session.id).session).attempt(first.id).balance?.inFlight.count == 1, "refused, and held")

        refundedByHand.withLock { $0 = true }
        f.clock.advance(60)
        await Reconciler(checkout: f.checkout).runPass()
        let settled = try (try await f.checkout.session(session.id).session).attempt(first.id)
        #expect(settled.balance?.refunded == 1000 && settled.balance?.inFlight.isEmpty == true, "\(String(describing: settled.balance))")
        #expect(provider.count(.refund) == 1, "sent again although the provider shows it made")
    }
    /// A notification is a claim: one saying `authorized` for an attempt
    /// recorded failed (delivered after the one that voided it) is acted on
    /// only as the provider's verify states it, here still failed.
    @Test func aLateChargeByNotificationIsActedOnOnlyAsTheProvidersVerifyStatesIt() async throws {
        let charged = Shared(false)
        let provider = ScriptedProvider("slow", webhook: { request in
            // The body names the payment (and, by its trailing spaces, a distinct event).
            WebhookResult(verified: true, eventId: "evt-\(request.body)",
                          paymentId: String(decoding: Data(base64Encoded: request.body) ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespaces),
                          status: .authorized, amount: Money(value: 1000, currency: "SAR"))
        }) { call in
            switch call {
            case .authorize: return .unknown("no answer within the call's timeout")
            case .verify(let r):
                guard charged.withLock({ $0 }) else {
                    return .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .unknownPayment, message: "no such payment", retryable: false)))
                }
                return .answered(AdapterResult(status: .authorized, providerReference: "slow-\(r.paymentId)", amount: Money(value: 1000, currency: "SAR")))
            default: return .answered(ScriptedProvider.success(call))
            }
        }
        let f = try EngineFixture([(slowProfile(window: 0), provider)])
        let session = try await f.session(capture: .manual)
        let attempt = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"))
        #expect(try await f.checkout.verify(attempt: attempt.id).status == .failed)

        _ = try await f.checkout.webhook(provider: "slow", headers: [:], body: Data(attempt.id.utf8))
        #expect(try await f.checkout.session(session.id).session.status == .open, "a notification alone completed the session")
        #expect(try (try await f.checkout.session(session.id).session).attempt(attempt.id).status == .failed)

        charged.withLock { $0 = true }
        _ = try await f.checkout.webhook(provider: "slow", headers: [:], body: Data((attempt.id).utf8) + Data(" ".utf8))
        let paid = try await f.checkout.session(session.id).session
        #expect(paid.status == .completed && paid.attempts[0].status == .authorized, "\(paid.attempts.map(\.status))")
    }
}
