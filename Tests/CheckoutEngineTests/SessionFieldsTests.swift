@testable import CheckoutEngine
import Foundation
import GatewayPayloads
import PaymentFields
import TestSupport
import Testing

/// A session's `fields` (docs/fields.md): per available method, the form of
/// the first provider by priority that may serve the session with it (none
/// when that provider declares none), kept in the stored answer a replay returns.
@Suite("Session fields")
struct SessionFieldsTests {
    static let phone = Field(id: "phone", kind: .numericstring, validators: [.msisdn(defaultCountry: "SA")])
    static let card = Field(id: "cardNumber", kind: .numericstring, location: .client, validators: [.luhn])

    @Test func aSessionCarriesTheFormOfTheFirstProviderThatServesTheMethod() async throws {
        var a = profile("a", priority: 1)
        a.fields = ["mada": [Self.phone]]
        var b = profile("b", priority: 2)
        b.fields = ["mada": [Field(id: "other", kind: .string)], "visa": [Self.card]]
        var off = profile("c", priority: 0, enabled: false)
        off.fields = ["mada": [Field(id: "disabled", kind: .string)]]
        let f = try EngineFixture([(a, ScriptedProvider.approving("a")), (b, ScriptedProvider.approving("b")), (off, ScriptedProvider.approving("c"))])
        let created = try await f.checkout.createSession(
            NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-fields"), idempotencyKey: "fields-1")
        // Provider a comes first for both methods: its form for mada, and none for visa (b's is not used:
        // the attempt would go to a).
        #expect(created.fields == ["mada": [Self.phone]])
        // The idempotent replay answers the stored snapshot, fields included.
        let replay = try await f.checkout.createSession(
            NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-fields"), idempotencyKey: "fields-1")
        #expect(replay.fields == created.fields)
        let decoded = try DocumentCoding.decode(SessionSnapshot.self, from: DocumentCoding.encode(created))
        #expect(decoded.fields == created.fields)
        // A session no provider can serve shows no form.
        let kwd = try await f.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "USD"), country: "SA", orderId: "o-usd"))
        #expect(kwd.fields.isEmpty)
    }

    /// An attempt is checked against the form of the provider it goes to: the
    /// session's (the first by priority) unless it pins one, whose own form
    /// (here none) is used; no provider is called when the form refuses.
    @Test func anAttemptIsCheckedAgainstTheFormOfTheProviderItGoesTo() async throws {
        var a = profile("a", priority: 1)
        a.fields = ["mada": [Self.phone]]
        let providerA = ScriptedProvider.approving("a"), providerB = ScriptedProvider.approving("b")
        let f = try EngineFixture([(a, providerA), (profile("b", priority: 2), providerB)])
        let session = try await f.session()
        await #expect { try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", instrument: ["phone": .string("12345")])) } throws: {
            ($0 as? Problem)?.code == .invalidFields && ($0 as? Problem)?.problems?.map(\.field) == ["instrument.phone"]
        }
        #expect(providerA.calls.isEmpty && providerB.calls.isEmpty)
        let pinned = try await f.checkout.attempt(session: session.id, NewAttempt(method: "mada", provider: "b", instrument: ["phone": .string("12345")]))
        #expect(pinned.status == .succeeded && pinned.providerID == "b" && providerA.calls.isEmpty)
    }

    /// What a session offers is worked out once per set of serving providers
    /// and kept; a provider whose profile changes (a manifests reload) is
    /// another entry, so no session is offered a form or method it no longer has.
    @Test func aChangedProfileChangesWhatTheNextSessionOffers() async throws {
        var a = profile("a", priority: 1)
        a.fields = ["mada": [Self.phone]]
        let directory = SwitchableDirectory([(a, .approving("a")), (profile("b", priority: 2), .approving("b"))])
        let f = try EngineFixture(directory: directory)
        let sar = NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-offer")
        let first = try await f.checkout.createSession(sar)
        let second = try await f.checkout.createSession(sar)
        #expect(first.fields == ["mada": [Self.phone]] && second.fields == first.fields && second.availableMethods == first.availableMethods)
        #expect(f.checkout.offers.count == 1)
        directory.update("a") { $0.fields = ["mada": [Self.card]]; $0.methods = ["mada"] }
        let changed = try await f.checkout.createSession(sar)
        #expect(changed.fields == ["mada": [Self.card]])
        #expect(changed.availableMethods == first.availableMethods)
        directory.update("b") { $0.methods.remove("visa") }
        let narrower = try await f.checkout.createSession(sar)
        #expect(!narrower.availableMethods.contains("visa"))
        // Disabled: b alone serves, with no form for mada.
        directory.setEnabled("a", false)
        let withoutA = try await f.checkout.createSession(sar)
        #expect(withoutA.fields.isEmpty)
    }
}
