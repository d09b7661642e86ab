import Foundation
import ProviderSandbox
import Testing
import TestSupport

/// The Tamara simulator driven by a client nobody here wrote. Tamara
/// publishes no Python SDK; `aghfatehi-django-tamara` (PyPI, a third-party
/// Django integration, pinned in scripts/install-prerequisites) is a real
/// HTTP client of its API, driven through its client only
/// (scripts/tamara-client-check): a checkout with float amounts, the order
/// read by id and by the merchant's reference, authorise before and after the
/// payer's approval, a partial and a final capture whose tracking members
/// are null, a capture and a refund past what is left refused, the order's
/// totals, a cancel, 404s and a wrong token's 401.
@Suite struct TamaraClientTests {
    /// Whether Python can import the client. CI installs it; missing there fails.
    static let isAvailable = PythonModules.importable("tamara.client, django")

    static var script: String { BuildProducts.repository.appendingPathComponent("scripts/tamara-client-check").path }

    @Test func ciHasTheClient() {
        #expect(Self.isAvailable || ProcessInfo.processInfo.environment["CI"] == nil,
                "CI is set but aghfatehi-django-tamara is not installed: run scripts/install-prerequisites")
    }

    @Test(.enabled(if: TamaraClientTests.isAvailable, "aghfatehi-django-tamara and Django (scripts/install-prerequisites)"))
    func aThirdPartyTamaraClientDrivesTheSimulatorAsItDrivesTamara() async throws {
        let fx = try await TamaraSimulatorFixture.start()
        let run = try await runProcessOffThePool("/usr/bin/env", ["python3", Self.script, fx.base, TamaraSimulator.apiToken])
        await fx.stop()
        let checks = WorldlineSDKTests.lines(run.stdout).filter { $0.check != nil }
        #expect(checks.count >= 17, "\(run.output)")
        for check in checks {
            #expect(check.ok == true, "\(check.check ?? ""): \(check.detail ?? "")")
        }
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")
    }
}
