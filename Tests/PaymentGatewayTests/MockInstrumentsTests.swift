import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import Synchronization
import Testing
import TestSupport

/// ABI 1.1 `instruments` through the real host: the shipped mock (dlopen, the
/// libffi bridge or the runner, the engine, the SQLite store) offers a known
/// payer's saved cards, and a payment with one reaches the mock with its
/// reference; answers the host must not offer are refused.
@Suite struct MockInstrumentsTests {
    /// - Parameter bound: how long creation waits for instruments; long by
    ///   default, so that a machine under load cannot make the mock "slow".
    static func gateway(isolation: String? = nil, withExampleC: Bool = false, bound: Duration = .seconds(60),
                        observer: (@Sendable (AdapterCall) -> Void)? = nil) async throws -> PaymentGateway {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("instruments-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"),
                                         to: manifests.appendingPathComponent("mock.json"))
        if withExampleC {
            try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("example-c.json"),
                                             to: manifests.appendingPathComponent("example-c.json"))
        }
        if let isolation { try ManifestText.setIsolation(manifests.appendingPathComponent("mock.json"), to: isolation) }
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        configuration.reconcileInterval = .seconds(3600)
        configuration.checkout.instrumentsTimeout = bound
        configuration.callObserver = observer
        return try await PaymentGateway.open(configuration: configuration)
    }

    static func session(_ gateway: PaymentGateway, payer reference: String?, currency: String = "SEK", country: String = "SE") async throws -> SessionSnapshot {
        try await gateway.createSession(NewSession(
            amount: Money(value: 2500, currency: currency), country: country, orderId: "ins-\(UUID().uuidString.prefix(8))",
            payer: reference.map { Payer(email: "sara@example.com", reference: $0) }))
    }

    @Test(arguments: ["in-process", "process"])
    func theMockOffersAKnownPayersSavedCardAndPaysWithIt(isolation: String) async throws {
        let gateway = try await Self.gateway(isolation: isolation)
        let snapshot = try await Self.session(gateway, payer: "mock-cards")
        let visa = try #require(snapshot.instruments["visa"]?.first)
        #expect(visa.instrument.kind == "saved_card" && visa.instrument.last4 == "1111" && visa.provider == "mock" && visa.instrument.reference == nil)
        #expect(snapshot.instruments["swish"]?.first?.instrument.masked == "+46 7* *** **67")
        #expect(snapshot.instruments["applepay"]?.first?.instrument.available == true)
        #expect(snapshot.instruments["googlepay"]?.first?.instrument.available == false)
        #expect(snapshot.instruments["mada"]?.first?.instrument.mode == "menu")
        // Only methods the session may use: the mock offers nothing for tabby, and the menu only where asked.
        #expect(Set(snapshot.instruments.keys).isSubset(of: Set(snapshot.availableMethods)))

        let paid = try await gateway.attempt(session: snapshot.session.id, NewAttempt(method: "visa", instrumentId: try #require(visa.id)))
        #expect(paid.status == .succeeded && paid.providerID == "mock")

        // The web menu has no reference: the mock gets the empty one, and pays.
        let again = try await Self.session(gateway, payer: "mock-cards")
        let menu = try #require(again.instruments["mada"]?.first?.id)
        let byMenu = try await gateway.attempt(session: again.session.id, NewAttempt(method: "mada", instrumentId: menu))
        #expect(byMenu.status == .succeeded && byMenu.providerID == "mock")

        // An anonymous session gets nothing from the mock.
        let other = try await Self.session(gateway, payer: nil)
        #expect(other.instruments.isEmpty)
        await gateway.shutdown()
    }

    /// The mock's `mock-pan`, `mock-fail` and `mock-slow` payers: the host
    /// offers nothing, and the session is created and pays as any other.
    /// `mock-slow` runs under a short bound (its own gateway); the others
    /// under the long default, so a loaded machine cannot turn them into timeouts.
    @Test(arguments: [("mock-pan", "rejected"), ("mock-fail", "failed_4"), ("mock-slow", "timed_out")])
    func anAnswerHoldingACardNumberIsRefusedWholeAndSlowOrFailingOnesOfferNothing(payer: String, outcome: String) async throws {
        let outcomes = Mutex<[String]>([])
        let bound: Duration = payer == "mock-slow" ? .milliseconds(300) : .seconds(60)
        let gateway = try await Self.gateway(bound: bound) { call in
            if call.operation == "instruments" { outcomes.withLock { $0.append(call.outcome) } }
        }
        let snapshot = try await Self.session(gateway, payer: payer)
        #expect(snapshot.instruments.isEmpty, "\(payer): \(snapshot.instruments)")
        let paid = try await gateway.attempt(session: snapshot.session.id, NewAttempt(method: "visa"))
        #expect(paid.status == .succeeded)
        // The slow one ends at its deadline (or, when the host's deadline sweeper is late, at the engine's backstop: cancelled).
        let seen = outcomes.withLock { $0 }
        #expect(seen == [outcome] || (payer == "mock-slow" && seen == ["cancelled"]), "\(seen)")
        #expect(ABIStatus.internal.rawValue == 4)
        await gateway.shutdown()
    }

    @Test func aOnePointZeroAdapterBesideTheMockIsNeverAsked() async throws {
        let asked = Mutex<Set<String>>([])
        let gateway = try await Self.gateway(withExampleC: true) { call in
            if call.operation == "instruments" { asked.withLock { _ = $0.insert(call.provider) } }
        }
        #expect(gateway.providerRecords.compactMap(\.id).sorted() == ["example-c", "mock"])
        let example = try #require(gateway.providerRecords.first { $0.id == "example-c" }?.adapter)
        #expect(example.abiMinor == 0 && !example.adapterDescription.operations.contains(.instruments))
        // EUR in DE: both can take it (the example adapter's visa too).
        let snapshot = try await Self.session(gateway, payer: "mock-cards", currency: "EUR", country: "DE")
        #expect(snapshot.availableMethods.contains("visa"))
        #expect(asked.withLock { $0 } == ["mock"])
        #expect(snapshot.instruments.values.joined().allSatisfy { $0.provider == "mock" })
        await gateway.shutdown()
    }
}
