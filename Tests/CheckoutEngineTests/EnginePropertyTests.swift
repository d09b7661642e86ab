import CheckoutEngine
import Foundation
import GatewayPayloads
import PropertyBased
import Synchronization
import TestSupport
import Testing

/// Random sequences of engine calls against a provider whose every answer is
/// random too (success, decline, safe decline, pending, nothing sent, unknown),
/// checking after each call what must always hold. PropertyBased shrinks a
/// failing sequence to a short one. The provider also charges after the host
/// gave up: a verify of an attempt recorded failed may answer `succeeded`
/// (a late charge, which completes an unpaid session or is reversed).
@Suite struct EnginePropertyTests {
    /// One step: which call, and a number that picks its details.
    struct Step: CustomStringConvertible {
        var code: Int
        var operation: Int { code % 9 }
        var detail: Int { code / 9 }
        var description: String { "op\(operation)/\(detail)" }
    }

    static func randomReply(_ call: ProviderCall, _ pick: Int) -> ProviderReply {
        switch pick % 7 {
        case 0: .notSent("refused")
        case 1: .unknown("dropped")
        case 2: .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .cardDeclined, message: "05", retryable: false)))
        case 3: .answered(AdapterResult(status: .failed, problem: AdapterProblem(code: .providerError, message: "96", retryable: true, safeToRetryElsewhere: true)))
        case 4: .answered(AdapterResult(status: .pending, providerReference: "r-\(call.paymentId)"))
        default: .answered(ScriptedProvider.success(call))
        }
    }

    @Test func noSequenceOfCallsBreaksAnInvariant() async throws {
        await propertyCheck(count: 60, input: Gen.int(in: 0...899).array(of: 1...40)) { codes in
            let picks = Shared<[Int]>(codes.reversed().map { $0 % 7 })
            let unknownSeen = Mutex<Set<String>>([])
            let providers = ["a", "b"].map { id in
                ScriptedProvider(id) { call in
                    let reply = Self.randomReply(call, picks.withLock { $0.popLast() ?? 5 })
                    if case .unknown = reply, case .authorize(let r) = call { unknownSeen.withLock { _ = $0.insert(r.paymentId) } }
                    return reply
                }
            }
            let f = try EngineFixture([(profile("a", priority: 1), providers[0]), (profile("b", priority: 2), providers[1])])
            let session = try await f.session(10_000, capture: codes.first.map { $0 % 2 == 0 ? .automatic : .manual } ?? .automatic)
            for step in codes.map(Step.init) {
                let current = try await f.checkout.session(session.id).session
                let payment = current.payment?.id ?? "att_none"
                let live = current.liveAttempt?.id ?? "att_none"
                do {
                    switch step.operation {
                    case 0, 1: _ = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada"), idempotencyKey: step.detail % 3 == 0 ? "k\(step.detail % 5)" : nil)
                    case 2: _ = try await f.checkout.capture(payment: payment, amount: Int64(step.detail * 40), idempotencyKey: "cap-\(step.detail % 7)")
                    case 3: _ = try await f.checkout.refund(payment: payment, amount: Int64(step.detail * 40), idempotencyKey: "ref-\(step.detail % 7)")
                    case 4: _ = try await f.checkout.void(payment: payment, idempotencyKey: "void-\(step.detail % 3)")
                    case 5: _ = try await f.checkout.abort(session: session.id)
                    case 6:
                        // The live attempt; else one the host gave up on, which the provider may have charged since.
                        let given = current.attempts.filter { $0.status == .failed || $0.status == .cancelled }
                        let target = current.liveAttempt?.id ?? (given.isEmpty ? live : given[step.detail % given.count].id)
                        _ = try await f.checkout.verify(attempt: target)
                    case 7: _ = try await f.checkout.proceed(session: session.id, attempt: live, PayerInput(otp: "1"))
                    default:
                        f.clock.advance(Double(step.detail))
                        await Reconciler(checkout: f.checkout).runPass()
                    }
                } catch is Problem {
                    // Refusals are fine; what matters is the state they leave.
                }
                let after = try await f.checkout.session(session.id).session
                try Self.check(after, before: current)
                // An unknown outcome is never followed by another provider's authorize.
                let unknown = unknownSeen.withLock { $0 }
                for attempt in after.attempts where unknown.contains(attempt.id) {
                    #expect(after.attempts.last?.id == attempt.id || attempt.status.isFinal,
                            "an attempt started while \(attempt.id)'s outcome was unknown")
                }
            }
            let events = try await f.store.events(ofSession: session.id, after: 0)
            #expect(events.map(\.sequence) == events.indices.map { Int64($0) + 1 }, "events not numbered 1, 2, 3, ... in order")
        }
    }

    /// A payment being undone, or undone: voided, fully refunded, or a late
    /// charge whose reversal is held.
    static func reversed(_ attempt: Attempt) -> Bool {
        guard let b = attempt.balance else { return false }
        return b.voided || (b.captured > 0 && b.refunded == b.captured) || b.inFlight.keys.contains { $0.hasSuffix(":late-charge-reversal") }
    }

    static func check(_ s: Session, before: Session) throws {
        let payments = s.attempts.filter(\.status.isPayment)
        // One payment the payer keeps: a late charge on a paid session is reversed.
        #expect(payments.filter { !reversed($0) }.count <= 1 || payments.count <= 1, "two payments in one session: \(payments.map(\.id))")
        if payments.count > 1 {
            #expect(payments.dropFirst().allSatisfy(reversed) || payments.dropLast().allSatisfy(reversed), "a second payment not reversed")
        }
        #expect((s.status == .completed) == !payments.isEmpty || (s.status == .cancelled && payments.allSatisfy(reversed)))
        #expect(s.attempts.filter { !$0.status.isFinal }.count <= 1, "two live attempts")
        // A final session keeps its status, but an expired one a late charge pays.
        if before.status.isFinal { #expect(s.status == before.status || (before.status == .expired && s.status == .completed), "a final session changed status") }
        for (old, new) in zip(before.attempts, s.attempts) where old.status.isFinal {
            // A final attempt keeps its status, but one the host gave up on becomes the payment the provider made.
            #expect(new.status == old.status || ((old.status == .failed || old.status == .cancelled) && new.status.isPayment), "a final attempt changed")
        }
        for attempt in s.attempts {
            if attempt.status == .processing { Issue.record("an attempt was left processing by a finished call") }
            guard let b = attempt.balance else { continue }
            #expect(b.refunded >= 0 && b.refunded <= b.captured, "refunds exceed captures")
            #expect(b.captured >= 0 && b.captured <= b.authorized.value, "captures exceed the authorization")
            #expect(!(b.voided && b.captured > 0))
        }
    }
}
