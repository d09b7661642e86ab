import CheckoutEngine
import GatewayPayloads
import TestSupport
import Testing

@Suite struct RoutingTests {
    let sar1000 = Money(value: 1000, currency: "SAR")

    func profile(_ id: String, priority: Int, enabled: Bool = true, methods: Set<String> = ["mada", "visa"],
                 limits: [String: ClosedRange<Int64>] = [:], manual: Bool = true) -> ProviderProfile {
        ProviderProfile(id: id, enabled: enabled, priority: priority, methods: methods, currencies: ["SAR", "KWD"],
                        countries: ["SA", "KW"], limits: limits, supportsManualCapture: manual)
    }

    @Test func disabledProviderIsNeverRouted() {
        let decision = Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic,
                                    profiles: [profile("a", priority: 1, enabled: false), profile("b", priority: 2)])
        #expect(decision.candidates.map(\.providerID) == ["b"])
        #expect(decision.excluded.first?.reason == "disabled")
        let pinned = Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic, pinnedProvider: "a",
                                  profiles: [profile("a", priority: 1, enabled: false)])
        #expect(pinned.candidates.isEmpty, "pinning does not bypass disabling")
    }

    @Test func candidatesComeInPriorityOrderWithReasons() {
        let decision = Router.route(mode: .test, method: "visa", amount: sar1000, country: "SA", capture: .automatic,
                                    profiles: [profile("c", priority: 50), profile("a", priority: 10), profile("b", priority: 10)])
        #expect(decision.candidates.map(\.providerID) == ["a", "b", "c"])
        #expect(decision.candidates[0].reason.contains("priority (10)"))
    }

    @Test func methodCountryAmountAndCaptureModeFilter() {
        let profiles = [
            profile("no-mada", priority: 1, methods: ["visa"]),
            profile("small", priority: 2, limits: ["SAR": 1...500]),
            profile("auto-only", priority: 3, manual: false),
            profile("ok", priority: 4),
        ]
        let decision = Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .manual, profiles: profiles)
        #expect(decision.candidates.map(\.providerID) == ["ok"])
        #expect(Router.route(mode: .test, method: "mada", amount: sar1000, country: "BR", capture: .automatic, profiles: profiles).candidates.isEmpty)
    }

    /// A method narrowed to some currencies (`method_currencies`) is routed
    /// only in those, with the reason said; its other methods are not touched.
    @Test func aMethodNarrowedToSomeCurrenciesIsRoutedOnlyInThem() {
        var narrowed = profile("narrowed", priority: 1)
        narrowed.methodCurrencies = ["mada": ["SAR"]]
        let kwd = Money(value: 1000, currency: "KWD")
        let refused = Router.route(mode: .test, method: "mada", amount: kwd, country: "KW", capture: .automatic, profiles: [narrowed])
        #expect(refused.candidates.isEmpty && refused.excluded.first?.reason == "offers mada only in SAR")
        #expect(Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic, profiles: [narrowed]).candidates.count == 1)
        #expect(Router.route(mode: .test, method: "visa", amount: kwd, country: "KW", capture: .automatic, profiles: [narrowed]).candidates.count == 1)
        #expect(narrowed.methods(in: "KWD") == ["visa"] && narrowed.methods(in: "SAR") == ["mada", "visa"])
    }

    @Test func aProviderOfTheOtherModeIsNeverACandidate() {
        var live = profile("live", priority: 5)
        live.mode = .live
        let test = profile("test", priority: 1)
        let forLive = Router.route(mode: .live, method: "mada", amount: sar1000, country: "SA", capture: .automatic, profiles: [test, live])
        #expect(forLive.candidates.map(\.providerID) == ["live"])
        #expect(forLive.excluded.first?.reason == "a test provider never serves a live session")
        let pinned = Router.route(mode: .live, method: "mada", amount: sar1000, country: "SA", capture: .automatic, pinnedProvider: "test", profiles: [test])
        #expect(pinned.candidates.isEmpty, "pinning does not cross modes")
        #expect(Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic, profiles: [live]).candidates.isEmpty)
    }

    @Test func openCircuitIsSkippedAndHalfOpenIsTheProbe() {
        let profiles = [profile("a", priority: 1), profile("b", priority: 2)]
        let open = Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic, profiles: profiles) { $0 == "a" ? .open : .closed }
        #expect(open.candidates.map(\.providerID) == ["b"])
        let half = Router.route(mode: .test, method: "mada", amount: sar1000, country: "SA", capture: .automatic, profiles: profiles) { $0 == "a" ? .halfOpen : .closed }
        #expect(half.candidates.first?.reason.contains("probe") == true)
    }
}

@Suite struct CircuitBreakerTests {
    @Test func opensAfterConsecutiveFailuresAndHalfOpensAfterTheCooldown() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(30))
        let t0 = ContinuousClock.now
        breaker.recordFailure(at: t0)
        breaker.recordFailure(at: t0)
        #expect(breaker.state(at: t0) == .closed)
        breaker.recordFailure(at: t0)
        #expect(breaker.state(at: t0) == .open)
        let early = breaker.allow(at: t0 + .seconds(29))
        #expect(!early)
        #expect(breaker.state(at: t0 + .seconds(30)) == .halfOpen)
        let probe = breaker.allow(at: t0 + .seconds(30))
        let second = breaker.allow(at: t0 + .seconds(31))
        #expect(probe, "one probe")
        #expect(!second, "only one probe at a time")
        breaker.recordFailure(at: t0 + .seconds(32))
        #expect(breaker.state(at: t0 + .seconds(33)) == .open, "a failed probe reopens")
        let later = breaker.allow(at: t0 + .seconds(62))
        #expect(later)
        breaker.recordSuccess()
        #expect(breaker.state(at: t0 + .seconds(62)) == .closed)
    }

    @Test func aSuccessResetsTheCount() {
        var breaker = CircuitBreaker(threshold: 2)
        let t = ContinuousClock.now
        breaker.recordFailure(at: t)
        breaker.recordSuccess()
        breaker.recordFailure(at: t)
        #expect(breaker.state(at: t) == .closed)
    }
}
