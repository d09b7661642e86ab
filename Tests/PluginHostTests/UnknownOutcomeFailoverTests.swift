import CGatewayABI
import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import Synchronization
import Testing

/// Finding 1 of the fail-closed issue end to end: through the real gateway
/// (manifests, loader, libffi bridge, engine, SQLite store), an adapter that
/// completes an authorize with a status the header does not document as
/// "nothing was sent" leaves the attempt pending at that provider. The next
/// provider in line (the shipped mock, which would approve) is never called:
/// before the fix the attempt failed over and the payer could be charged twice.
@Suite(.serialized) struct UnknownOutcomeFailoverTests {
    @Test(arguments: [13, -1, 1000, GW_E_BUFFER_TOO_SMALL])
    func anUnlistedCompletionStatusIsNeverFailedOver(status: Int32) async throws {
        let folder = try ManifestFolder()
        try await FabricatedAdapter(id: "first", completionStatus: status)
            .install(in: folder, manifestName: "first.json", manifestChanges: ["priority": 1])
        let calls = Mutex<[AdapterCall]>([])
        var configuration = PaymentGateway.Configuration(manifests: folder.manifests.path, data: folder.root.appendingPathComponent("data").path)
        configuration.libraries = folder.store
        configuration.callObserver = { call in calls.withLock { $0.append(call) } }
        configuration.reconcileInterval = .seconds(3600)
        let gateway = try await PaymentGateway.open(configuration: configuration)

        let session = try await gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"))
        #expect(session.availableMethods.contains("visa"))
        let attempt = try await gateway.attempt(session: session.session.id, NewAttempt(method: "visa"))
        #expect(attempt.providerID == "first" && attempt.status == .pending, "status \(status): \(attempt.status) at \(attempt.providerID)")
        let recorded = try await gateway.session(session.session.id).session
        #expect(recorded.attempts.count == 1 && recorded.status != .completed, "no second attempt, and nothing reads as paid")
        let authorizes = calls.withLock { $0.filter { $0.operation == "authorize" } }
        #expect(authorizes.map(\.provider) == ["first"] && authorizes.first?.outcome == "unknown",
                "status \(status): authorize calls \(authorizes.map { "\($0.provider) \($0.outcome)" })")
        await gateway.shutdown()
    }
}
