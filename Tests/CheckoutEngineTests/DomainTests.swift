import CheckoutEngine
import GatewayPayloads
import TestSupport
import Testing

@Suite struct AttemptTransitionTests {
    @Test func finalStatesHaveNoWayOut() {
        for from in AttemptStatus.allCases where from.isFinal {
            for to in AttemptStatus.allCases {
                #expect(!from.canMove(to: to), "\(from) -> \(to)")
            }
        }
    }

    @Test func nothingReturnsToProcessing() {
        for from in AttemptStatus.allCases { #expect(!from.canMove(to: .processing)) }
    }

    @Test func partialApprovalBecomesTheAuthorizedAmount() throws {
        var attempt = Attempt(id: "a", method: "mada", providerID: "mock", routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
        try attempt.move(to: .succeeded, approved: Money(value: 500, currency: "SAR"))
        #expect(attempt.balance?.authorized.value == 500)
        #expect(attempt.balance?.captured == 500)
    }
}

@Suite struct PaymentBalanceTests {
    let sar = { (v: Int64) in Money(value: v, currency: "SAR") }

    @Test func manualCaptureThenPartialRefunds() throws {
        var balance = PaymentBalance(authorized: sar(1000), capturedAutomatically: false)
        try balance.capture(sar(600))
        #expect(throws: DomainError.exceedsAuthorized(requested: 401, remaining: 400)) { try balance.capture(sar(401)) }
        try balance.refund(sar(200))
        try balance.refund(sar(400))
        #expect(throws: DomainError.exceedsCaptured(requested: 1, remaining: 0)) { try balance.refund(sar(1)) }
        #expect(throws: DomainError.voidAfterCapture(captured: 600)) { try balance.void() }
    }

    @Test func voidReleasesAnUncapturedAuthorizationOnce() throws {
        var balance = PaymentBalance(authorized: sar(1000), capturedAutomatically: false)
        try balance.void()
        #expect(throws: DomainError.alreadyVoided) { try balance.void() }
        #expect(throws: DomainError.alreadyVoided) { try balance.capture(sar(1)) }
    }

    @Test func wrongCurrencyAndNonPositiveAmountsAreRefused() {
        var balance = PaymentBalance(authorized: sar(1000), capturedAutomatically: true)
        #expect(throws: DomainError.currencyMismatch(expected: "SAR", got: "KWD")) { try balance.refund(Money(value: 1, currency: "KWD")) }
        #expect(throws: DomainError.nonPositiveAmount(0)) { try balance.refund(sar(0)) }
        #expect(throws: DomainError.captureOfAutomaticPayment) { try balance.capture(sar(1)) }
    }
}

@Suite struct SessionRuleTests {
    func session() throws -> Session {
        try Session(id: "s", amount: Money(value: 1000, currency: "SAR"), country: "SA", orderID: "o", capture: .automatic)
    }

    func attempt(_ id: String) -> Attempt {
        Attempt(id: id, method: "mada", providerID: "mock", routingReason: "test", requested: Money(value: 1000, currency: "SAR"))
    }

    @Test func oneLiveAttemptAtATime() throws {
        var s = try session()
        try s.start(attempt("a1"))
        #expect(throws: DomainError.attemptInProgress(attemptID: "a1")) { try s.start(attempt("a2")) }
        try s.move(attempt: "a1", to: .pending)
        #expect(throws: DomainError.attemptInProgress(attemptID: "a1")) { try s.abort() }
        try s.move(attempt: "a1", to: .failed)
        try s.start(attempt("a2"))
        try s.move(attempt: "a2", to: .succeeded)
        #expect(s.status == .completed)
        #expect(throws: DomainError.sessionNotOpen(.completed)) { try s.start(attempt("a3")) }
    }

    @Test func abortedAndExpiredSessionsAcceptNothing() throws {
        var s = try session()
        try s.abort()
        #expect(throws: DomainError.sessionNotOpen(.cancelled)) { try s.start(attempt("a")) }
        var t = try session()
        try t.expire()
        #expect(throws: DomainError.sessionNotOpen(.expired)) { try t.abort() }
    }
}

/// Random sequences of every operation, checking after each step that no
/// sequence reaches an illegal state and that refunds never exceed captures.
@Suite struct SessionPropertyTests {
    @Test(arguments: 0..<200)
    func noSequenceBreaksTheInvariants(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let capture: CaptureMode = Bool.random(using: &g) ? .automatic : .manual
        var s = try Session(id: "s", amount: Money(value: 10_000, currency: "KWD"), country: "KW", orderID: "o", capture: capture)
        var next = 0
        for _ in 0..<60 {
            let before = s
            let amount = Money(value: Int64.random(in: -50...6_000, using: &g), currency: Bool.random(using: &g) ? "KWD" : "SAR")
            do {
                switch Int.random(in: 0..<7, using: &g) {
                case 0:
                    next += 1
                    try s.start(Attempt(id: "a\(next)", method: "visa", providerID: "p", routingReason: "r", requested: s.amount))
                case 1:
                    let target = AttemptStatus.allCases.randomElement(using: &g)!
                    try s.move(attempt: "a\(Int.random(in: 0...next, using: &g))", to: target,
                               approved: Bool.random(using: &g) ? Money(value: Int64.random(in: 1...10_000, using: &g), currency: "KWD") : nil)
                case 2: try s.capture(amount, of: s.payment?.id ?? "none")
                case 3: try s.refund(amount, of: s.payment?.id ?? "none")
                case 4: try s.void(s.payment?.id ?? "none")
                case 5: try s.abort()
                default: try s.expire()
                }
            } catch {
                #expect(s == before, "a refused operation changed the session: \(error)")
            }
            try Self.checkInvariants(s, before: before)
        }
    }

    static func checkInvariants(_ s: Session, before: Session) throws {
        let payments = s.attempts.filter(\.status.isPayment)
        #expect(payments.count <= 1, "two payments in one session")
        #expect((s.status == .completed) == (payments.count == 1))
        #expect(s.attempts.filter { !$0.status.isFinal }.count <= 1, "two live attempts")
        if before.status.isFinal { #expect(s.status == before.status) }
        for (old, new) in zip(before.attempts, s.attempts) where old.status.isFinal {
            #expect(new.status == old.status, "a final attempt changed")
        }
        for attempt in s.attempts {
            guard let b = attempt.balance else {
                #expect(!attempt.status.isPayment)
                continue
            }
            #expect(b.refunded >= 0 && b.refunded <= b.captured)
            #expect(b.captured >= 0 && b.captured <= b.authorized.value)
            #expect(!(b.voided && b.captured > 0))
            #expect(b.authorized.currency == s.amount.currency)
        }
    }
}
