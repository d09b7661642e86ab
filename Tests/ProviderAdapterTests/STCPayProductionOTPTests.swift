import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import Testing
import TestSupport

/// Production can never expose an OTP: the simulator answers its sandbox-only
/// `SandboxOtpValue`, but an adapter not configured `sandbox: true` ignores it.
@Suite("STC Pay adapter without sandbox mode", .heavy)
struct STCPayProductionOTPTests {
    @Test func anAdapterNotInSandboxModeNeverPassesAnOTPOn() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stcpay-production-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try BuildProducts.writeShippedManifest("stcpay.json", into: folder) { manifest in
            var sandbox = try #require(manifest["sandbox"] as? [String: Any])
            var config = try #require(sandbox["config"] as? [String: Any])
            #expect(config["sandbox"] as? Bool == true)
            config.removeValue(forKey: "sandbox")
            sandbox["config"] = config
            manifest["sandbox"] = sandbox
            manifest["library"] = BuildProducts.directory.appendingPathComponent("libSTCPayAdapter.so").path
        }

        let fx = try await SandboxGateway.start { $0.manifests = folder; $0.reconcileInterval = .seconds(3600) }
        do {
            let simulator: STCPaySimulator = try fx.simulator("stcpay")
            let session = try await fx.gateway.createSession(NewSession(
                amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "order-production", payer: Payer(phone: "0551234567")))
            let attempt = try await fx.gateway.attempt(session: session.session.id, NewAttempt(method: "stcpay", provider: "stcpay"))
            #expect(attempt.status == .pending)
            #expect(attempt.action?.type == .otp)
            #expect(attempt.action?.sandboxOtp == nil)
            #expect(attempt.providerReference?.hasSuffix(":") == true)
            // The payer types the SMS code: it still pays.
            let otp = try #require(simulator.otp(forRefNum: attempt.id))
            let paid = try await fx.gateway.proceed(session: session.session.id, attempt: attempt.id, PayerInput(otp: otp))
            #expect(paid.status == .succeeded)
        } catch {
            await fx.stop()
            throw error
        }
        await fx.stop()
    }
}
