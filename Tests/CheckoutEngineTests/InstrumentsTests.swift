import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Synchronization
import Testing
import TestSupport

/// Payer instruments (ABI 1.1) through the real engine and store: asked once
/// at creation, kept with their references sealed, shown per method while
/// their provider can take the session, and paid with at that provider only.
@Suite struct InstrumentsTests {
    static let reference = "tok-REF-7f3a-secret"

    /// Offers payer `cust-42` a saved Visa, the web menu and a wallet.
    static func savedCards(reference: String = InstrumentsTests.reference, expiresAt: String? = nil) -> @Sendable (InstrumentsRequest) async -> InstrumentsResult? {
        { request in
            guard request.payer?.reference == "cust-42" else { return InstrumentsResult() }
            var card = Instrument.savedCard(brand: "visa", last4: "0416", expiryMonth: 12, expiryYear: 2030, reference: reference)
            card.expiresAt = expiresAt
            return InstrumentsResult(methods: [
                "visa": [card],
                "mada": [.web(label: "All payment options", mode: "menu"), .wallet(available: true)],
            ])
        }
    }

    static func offering(_ id: String, expiresAt: String? = nil) -> ScriptedProvider {
        ScriptedProvider(id, instruments: savedCards(expiresAt: expiresAt)) { call in .answered(ScriptedProvider.success(call)) }
    }

    static func instrumentProfile(_ id: String, priority: Int, mode: PaymentMode = .test, enabled: Bool = true,
                                  currencies: Set<String> = ["SAR", "KWD"]) -> ProviderProfile {
        var p = profile(id, priority: priority, enabled: enabled)
        p.mode = mode
        p.currencies = currencies
        p.supportsInstruments = true
        return p
    }

    static let payer = Payer(name: "Sara", email: "sara@example.com", reference: "cust-42")

    func newSession(_ f: EngineFixture, payer: Payer? = InstrumentsTests.payer, key: String? = nil, mode: PaymentMode = .test) async throws -> SessionSnapshot {
        try await f.checkout.createSession(
            NewSession(amount: Money(value: 1500, currency: "SAR"), country: "SA", orderId: "o-ins", payer: payer), idempotencyKey: key, mode: mode)
    }

    @Test func instrumentsAreFetchedOnceAtCreationStoredAndSeenByAnotherEngine() async throws {
        let provider = Self.offering("psp")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider)])
        let created = try await newSession(f, key: "create-1")
        let card = try #require(created.instruments["visa"]?.first)
        #expect(card.instrument.kind == "saved_card" && card.instrument.last4 == "0416" && card.provider == "psp")
        #expect(card.id?.hasPrefix("ins_") == true && card.instrument.reference == nil)
        #expect(created.instruments["mada"]?.map(\.instrument.kind) == ["web", "wallet"])
        #expect(created.instruments["mada"]?.first?.id != nil && created.instruments["mada"]?.last?.id == nil, "only kinds a payer picks get an id")
        let request = try #require(provider.instrumentsRequests.first)
        #expect(request.methods == ["mada", "visa"] && request.payer?.reference == "cust-42" && request.amount.value == 1500 && request.mode == .test)

        // A replay answers the same, without asking again.
        let replay = try await newSession(f, key: "create-1")
        #expect(replay.instruments == created.instruments && provider.instrumentsRequests.count == 1)
        // Another engine on the same store sees what was stored.
        let other = Checkout(store: f.store, providers: StaticProviderDirectory([(Self.instrumentProfile("psp", priority: 1), provider)]),
                             fingerprintKey: testKey, now: { f.clock.now })
        #expect(try await other.session(created.session.id).instruments == created.instruments)
        #expect(provider.instrumentsRequests.count == 1)
        let events = try await f.store.events(ofSession: created.session.id, after: 0)
        #expect(events.first?.detail?.contains("instruments: psp 3") == true, "\(events.first?.detail ?? "")")
    }

    @Test func anAnonymousSessionAsksToo() async throws {
        let provider = Self.offering("psp")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider)])
        let created = try await newSession(f, payer: nil)
        #expect(created.instruments.isEmpty)
        #expect(provider.instrumentsRequests.count == 1 && provider.instrumentsRequests[0].payer == nil)
    }

    @Test func aProviderThatNeverAnswersIsCancelledAndTheOthersStillCount() async throws {
        let cancelled = Shared(false)
        let silent = ScriptedProvider("silent", instruments: { _ in
            // Waits until the engine gives up on it: only cancellation ends this.
            let stream = AsyncStream<Never> { _ in }
            for await _ in stream {}
            cancelled.withLock { $0 = true }
            return InstrumentsResult(methods: ["visa": [.savedCard(brand: "visa", last4: "9999", expiryMonth: 1, expiryYear: 2031, reference: "late")]])
        }) { call in .answered(ScriptedProvider.success(call)) }
        let fast = Self.offering("fast")
        let f = try EngineFixture([(Self.instrumentProfile("silent", priority: 1), silent), (Self.instrumentProfile("fast", priority: 2), fast)]) {
            // Long enough for "fast" to answer on a loaded machine: only "silent" is ever cut.
            $0.instrumentsTimeout = .seconds(2).scaled
        }
        let created = try await newSession(f)
        #expect(cancelled.withLock { $0 }, "the silent provider was not cancelled")
        #expect(created.instruments["visa"]?.map(\.provider) == ["fast"])
        let events = try await f.store.events(ofSession: created.session.id, after: 0)
        #expect(events.first?.detail?.contains("silent none") == true)
    }

    @Test func aProviderThatIgnoresItsCancelIsNotWaitedFor() async throws {
        // Returns only when the test releases it, after creation has returned.
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let stubborn = ScriptedProvider("stubborn", instruments: { _ in
            await withTaskCancellationHandler {
                for await _ in release {}
            } onCancel: {}
            return InstrumentsResult(methods: ["visa": [.savedCard(brand: "visa", last4: "9999", expiryMonth: 1, expiryYear: 2031, reference: "late")]])
        }) { call in .answered(ScriptedProvider.success(call)) }
        let f = try EngineFixture([(Self.instrumentProfile("stubborn", priority: 1), stubborn)]) { $0.instrumentsTimeout = .milliseconds(20) }
        let created = try await newSession(f)
        #expect(created.instruments.isEmpty)
        releaser.finish()
        #expect(try await f.checkout.session(created.session.id).instruments.isEmpty, "a late answer reached the session")
    }

    @Test func onlyThePayersReferenceIsSentToProvidersAskedForInstruments() async throws {
        let provider = Self.offering("psp")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider)])
        let created = try await newSession(f, payer: Payer(name: "Sara", email: "sara@example.com", phone: "+46701234567", reference: "cust-42"))
        #expect(provider.instrumentsRequests.map(\.payer) == [Payer(reference: "cust-42")])
        // The attempt's provider gets the whole payer.
        _ = try await f.checkout.attempt(session: created.session.id, NewAttempt(method: "visa"))
        guard case .authorize(let request)? = provider.calls.first else { Issue.record("no authorize"); return }
        #expect(request.payer?.email == "sara@example.com" && request.payer?.phone == "+46701234567")
    }

    @Test func aFailingProviderContributesNothingAndItsCircuitIsUntouched() async throws {
        let failing = ScriptedProvider("failing", instruments: { _ in nil }) { call in .answered(ScriptedProvider.success(call)) }
        let f = try EngineFixture([(Self.instrumentProfile("failing", priority: 1), failing)])
        for i in 0..<8 {
            _ = try await f.checkout.createSession(NewSession(amount: Money(value: 1500, currency: "SAR"), country: "SA", orderId: "o-\(i)", payer: Self.payer))
        }
        #expect(failing.instrumentsRequests.count == 8)
        #expect(f.checkout.circuitStates()["failing"] ?? .closed == .closed)
        let paid = try await f.checkout.attempt(session: try await newSession(f).session.id, NewAttempt(method: "visa"))
        #expect(paid.status == .succeeded)
    }

    @Test func onlyEligibleProvidersOfTheSessionsModeAreAsked() async throws {
        let eligible = Self.offering("eligible")
        let live = Self.offering("live")
        let disabled = Self.offering("disabled")
        let wrongCurrency = Self.offering("kwd-only")
        let unsupported = Self.offering("unsupported")
        var noSupport = profile("unsupported", priority: 5)
        noSupport.supportsInstruments = false
        let f = try EngineFixture([
            (Self.instrumentProfile("eligible", priority: 1), eligible),
            (Self.instrumentProfile("live", priority: 2, mode: .live), live),
            (Self.instrumentProfile("disabled", priority: 3, enabled: false), disabled),
            (Self.instrumentProfile("kwd-only", priority: 4, currencies: ["KWD"]), wrongCurrency),
            (noSupport, unsupported),
        ])
        let created = try await newSession(f)
        #expect(eligible.instrumentsRequests.count == 1)
        for other in [live, disabled, wrongCurrency, unsupported] {
            #expect(other.instrumentsRequests.isEmpty, "\(other.id) was asked")
        }
        #expect(Set(created.instruments["visa"]?.map(\.provider) ?? []) == ["eligible"])
        // A live session asks live providers only.
        _ = try await newSession(f, mode: .live)
        #expect(live.instrumentsRequests.count == 1 && eligible.instrumentsRequests.count == 1)
    }

    @Test func aSessionWithoutInstrumentProvidersKeepsNoList() async throws {
        let plain = ScriptedProvider.approving("plain")
        let f = try EngineFixture([(profile("plain", priority: 1), plain)])
        let created = try await newSession(f)
        #expect(created.session.instruments == nil && created.instruments.isEmpty)
        #expect(try await f.store.session(created.session.id)?.instruments == nil)
    }

    @Test func aSavedCardAttemptReachesItsProviderWithTheReferenceAndNeverFailsOver() async throws {
        let first = ScriptedProvider.approving("first")
        let offering = ScriptedProvider("offering", instruments: Self.savedCards()) { _ in
            .notSent("HTTP 503 before anything was sent")
        }
        let f = try EngineFixture([(profile("first", priority: 1), first), (Self.instrumentProfile("offering", priority: 2), offering)])
        let created = try await newSession(f)
        let id = try #require(created.instruments["visa"]?.first?.id)
        let attempt = try await f.checkout.attempt(session: created.session.id, NewAttempt(method: "visa", instrumentId: id))
        #expect(attempt.providerID == "offering" && attempt.status == .failed)
        #expect(first.calls.isEmpty, "a saved card's attempt went to another provider")
        guard case .authorize(let request)? = offering.calls.first else { Issue.record("no authorize"); return }
        #expect(SelectedInstrument(in: request.instrument) == SelectedInstrument(kind: "saved_card", reference: Self.reference))

        // Once the provider answers, the same instrument pays there.
        let working = Self.offering("offering")
        let g = try EngineFixture([(profile("first", priority: 1), first), (Self.instrumentProfile("offering", priority: 2), working)])
        let session = try await newSession(g)
        let card = try #require(session.instruments["visa"]?.first?.id)
        let paid = try await g.checkout.attempt(session: session.session.id, NewAttempt(method: "visa", instrument: ["note": .string("kept")], instrumentId: card))
        #expect(paid.status == .succeeded && paid.providerID == "offering" && paid.routingReason == "the provider that offered the chosen instrument")
        guard case .authorize(let sent)? = working.calls.first else { Issue.record("no authorize"); return }
        #expect(sent.instrument?["note"] == .string("kept") && SelectedInstrument(in: sent.instrument)?.reference == Self.reference)
    }

    @Test func aForeignTamperedOrExpiredInstrumentIdIsRefused() async throws {
        let provider = Self.offering("psp", expiresAt: "2027-01-16T08:00:00Z")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider)])
        let mine = try await newSession(f)
        let theirs = try await newSession(f)
        let foreign = try #require(theirs.instruments["visa"]?.first?.id)
        let own = try #require(mine.instruments["visa"]?.first?.id)
        var tampered = Array(own)
        tampered[10] = tampered[10] == "A" ? "B" : "A"
        let anotherKey = Checkout(store: f.store, providers: StaticProviderDirectory([(Self.instrumentProfile("psp", priority: 1), provider)]),
                                  fingerprintKey: Data(repeating: 9, count: 32), now: { f.clock.now })
        for id in [foreign, String(tampered), "ins_", "card_0416", Self.reference] {
            await #expect { try await f.checkout.attempt(session: mine.session.id, NewAttempt(method: "visa", instrumentId: id)) } throws: {
                ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail.contains("not an instrument of this session") == true
            }
        }
        // Ids only open under the key that sealed them.
        await #expect { try await anotherKey.attempt(session: mine.session.id, NewAttempt(method: "visa", instrumentId: own)) } throws: {
            ($0 as? Problem)?.code == .invalidRequest
        }
        // Past its expiry (the test clock starts in 2027), it is neither shown nor usable.
        f.clock.advance(60 * 60 * 24 * 30)
        #expect(try await f.checkout.session(mine.session.id).instruments["visa"] == nil)
        await #expect { try await f.checkout.attempt(session: mine.session.id, NewAttempt(method: "visa", instrumentId: own)) } throws: {
            ($0 as? Problem)?.detail.contains("expired") == true
        }
        #expect(provider.calls.isEmpty)
    }

    @Test func aMismatchedMethodOrProviderOrAReservedSelectedIsRefused() async throws {
        let provider = Self.offering("psp")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider), (profile("other", priority: 2), .approving("other"))])
        let created = try await newSession(f)
        let id = try #require(created.instruments["visa"]?.first?.id)
        let refusals: [(NewAttempt, String)] = [
            (NewAttempt(method: "mada", instrumentId: id), "is a visa instrument, not mada"),
            (NewAttempt(method: "visa", provider: "other", instrumentId: id), "was offered by psp, not other"),
            (NewAttempt(method: "visa", instrument: ["selected": .object(["kind": .string("saved_card"), "reference": .string("forged")])]),
             "instrument.selected is reserved"),
        ]
        for (request, detail) in refusals {
            await #expect { try await f.checkout.attempt(session: created.session.id, request) } throws: {
                ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail.contains(detail) == true
            }
        }
        #expect(provider.calls.isEmpty)
    }

    @Test func theViewHidesInstrumentsOfDisabledProvidersAndClosedSessions() async throws {
        let provider = Self.offering("psp")
        let directory = SwitchableDirectory([(Self.instrumentProfile("psp", priority: 1), provider), (profile("other", priority: 2), .approving("other"))])
        let f = try EngineFixture(directory: directory)
        let created = try await newSession(f)
        #expect(created.instruments["visa"]?.count == 1)
        directory.setEnabled("psp", false)
        let now = try await f.checkout.session(created.session.id)
        #expect(now.instruments.isEmpty && now.availableMethods.contains("visa"), "\(now.instruments)")
        let id = try #require(created.instruments["visa"]?.first?.id)
        await #expect { try await f.checkout.attempt(session: created.session.id, NewAttempt(method: "visa", instrumentId: id)) } throws: {
            ($0 as? Problem)?.code == .methodUnavailable
        }
        directory.setEnabled("psp", true)
        #expect(try await f.checkout.session(created.session.id).instruments["visa"]?.count == 1)
        let aborted = try await f.checkout.abort(session: created.session.id)
        #expect(aborted.instruments.isEmpty)
        #expect(try await f.checkout.session(created.session.id).instruments.isEmpty)
    }

    @Test func noReferenceAppearsInTheDocumentTheEventsOrTheView() async throws {
        let provider = Self.offering("psp")
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), provider)])
        let created = try await newSession(f, key: "k-ref")
        let id = try #require(created.instruments["visa"]?.first?.id)
        let paid = try await f.checkout.attempt(session: created.session.id, NewAttempt(method: "visa", instrumentId: id))
        #expect(paid.status == .succeeded)
        let stored = try #require(try await f.store.session(created.session.id))
        let events = try await f.store.events(ofSession: created.session.id, after: 0)
        let replay = try await newSession(f, key: "k-ref")
        var texts = [String(decoding: DocumentCoding.encode(stored), as: UTF8.self),
                     String(decoding: DocumentCoding.encode(try await f.checkout.session(created.session.id)), as: UTF8.self),
                     String(decoding: DocumentCoding.encode(replay), as: UTF8.self)]
        texts += events.map { "\($0)" }
        #expect(texts[0].contains(id), "the stored document keeps the sealed id")
        for text in texts {
            #expect(!text.contains(Self.reference) && !text.contains("7f3a"), "a reference leaked: \(text.prefix(200))")
        }
    }

    @Test func aPayerReferenceOutsideItsPatternIsRefused() async throws {
        let f = try EngineFixture([(Self.instrumentProfile("psp", priority: 1), Self.offering("psp"))])
        for bad in ["", "has space", String(repeating: "x", count: 65), "naïve"] {
            await #expect { try await newSession(f, payer: Payer(reference: bad)) } throws: {
                ($0 as? Problem)?.code == .invalidRequest && ($0 as? Problem)?.detail.contains("payer.reference") == true
            }
        }
    }
}

/// A directory whose providers a test enables and disables.
final class SwitchableDirectory: ProviderDirectory, Sendable {
    private let entries: Mutex<[(profile: ProviderProfile, provider: any PaymentProvider)]>

    init(_ entries: [(ProviderProfile, ScriptedProvider)]) {
        self.entries = Mutex(entries.map { ($0.0, $0.1 as any PaymentProvider) })
    }

    func setEnabled(_ id: String, _ enabled: Bool) {
        update(id) { $0.enabled = enabled }
    }

    /// Changes provider `id`'s profile, as a manifests reload would.
    func update(_ id: String, _ edit: (inout ProviderProfile) -> Void) {
        entries.withLock { all in
            for index in all.indices where all[index].profile.id == id { edit(&all[index].profile) }
        }
    }

    func profiles() -> [ProviderProfile] { entries.withLock { $0.map(\.profile) } }
    func provider(_ id: String) -> (any PaymentProvider)? { entries.withLock { all in all.first { $0.profile.id == id }?.provider } }
}
