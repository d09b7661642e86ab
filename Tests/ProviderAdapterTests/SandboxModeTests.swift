import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing
import TestSupport

/// `gateway serve --sandbox` runs the shipped providers, live by their files,
/// as test providers: they talk to simulators, so they serve test sessions and
/// never a live one.
@Suite("Sandbox mode runs the shipped providers as test", .heavy)
struct SandboxModeTests {
    @Test func theShippedProvidersServeTestSessionsOnlyInSandboxMode() async throws {
        // Only the providers: no mock or example-c to offer the methods instead.
        let fx = try await SandboxGateway.start(configure: { $0.reconcileInterval = .seconds(3600) }) { manifests in
            for name in ["mock.json", "example-c.json"] { try FileManager.default.removeItem(at: manifests.appendingPathComponent(name)) }
        }
        do {
            let records = fx.gateway.providerRecords
            #expect(records.map(\.id) == ["hyperpay", "stcpay", "swedbankpay", "tabby", "tamara", "worldline"])
            for record in records {
                #expect(record.state == .loaded, "\(record.id ?? "?"): \(record.failure.map { "\($0)" } ?? "")")
                let manifest = try #require(record.manifest)
                #expect(manifest.mode == .test, "\(manifest.id)")
                #expect(ProviderProfile(manifest: manifest).mode == .test, "\(manifest.id)")
                let file = try ManifestFile.read(URL(fileURLWithPath: record.manifestPath)).get()
                #expect(file.mode == .live, "\(manifest.id): the file is not changed")
            }

            let order = Money(value: 1000, currency: "SAR")
            let test = try await fx.gateway.createSession(NewSession(amount: order, country: "SA", orderId: "order-sandbox-test"), mode: .test)
            #expect(Set(test.availableMethods).isSuperset(of: ["mada", "stcpay", "tabby", "tamara"]))
            let live = try await fx.gateway.createSession(NewSession(amount: order, country: "SA", orderId: "order-sandbox-live"), mode: .live)
            #expect(live.availableMethods.isEmpty)
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }
}
