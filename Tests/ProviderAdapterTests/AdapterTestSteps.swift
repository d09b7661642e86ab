import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import ProviderSandbox
import Testing

/// A session's id and the attempt started in it.
typealias StartedAttempt = (session: String, attempt: Attempt)

/// The steps the adapter tests share: a gateway per test, starting an
/// attempt, the payer on a hosted page, the payer's return.
extension SandboxGateway {
    /// Runs `body` with a gateway on the shipped simulators and the simulator
    /// `id`, then stops the gateway, also when `body` throws. No background
    /// reconciliation: each test verifies when it means to.
    static func run<S: ProviderSimulator>(simulator id: String, _ body: (SandboxGateway, S) async throws -> Void) async throws {
        let fx = try await SandboxGateway.start { $0.reconcileInterval = .seconds(3600) }
        do { try await body(fx, try fx.simulator(id)) } catch { await fx.stop(); throw error }
        await fx.stop()
    }

    /// Creates `session` and starts `attempt` in it.
    func start(_ session: NewSession, _ attempt: NewAttempt) async throws -> StartedAttempt {
        let created = try await gateway.createSession(session)
        return (created.session.id, try await gateway.attempt(session: created.session.id, attempt))
    }

    /// The payer's step on the hosted page (the attempt's action URL with
    /// `query` added), which must redirect to a URL starting with `returnPrefix`;
    /// then the payer's return to the shop with what the page appended.
    func payOnHostedPage(_ started: StartedAttempt, outcome: String, query: String = "",
                         returnPrefix: String) async throws -> Attempt {
        let url = try #require(started.attempt.action?.url)
        let step = try await payerStep(url + query, outcome: outcome)
        #expect(step.status == 302)
        let location = try #require(step.location)
        #expect(location.hasPrefix(returnPrefix))
        return try await gateway.proceed(session: started.session, attempt: started.attempt.id,
                                         PayerInput(returnParams: Self.queryParameters(location)))
    }

    /// The payer approves on the hosted page and does not come back.
    func approveOnHostedPage(_ started: StartedAttempt) async throws {
        _ = try await payerStep(try #require(started.attempt.action?.url), outcome: "approve")
    }

    /// The payer comes back to the shop without any parameter.
    func returnWithoutParameters(_ started: StartedAttempt) async throws -> Attempt {
        try await gateway.proceed(session: started.session, attempt: started.attempt.id, PayerInput(returnParams: [:]))
    }

    /// The attempt `provider` made in `session`.
    func attempt(by provider: String, inSession session: String) async throws -> Attempt {
        let snapshot = try await gateway.session(session)
        return try #require(snapshot.session.attempts.first { $0.providerID == provider })
    }

    /// The query parameters of `url`, the last of each name.
    static func queryParameters(_ url: String) -> [String: String] {
        var params: [String: String] = [:]
        for item in URLComponents(string: url)?.queryItems ?? [] { params[item.name] = item.value ?? "" }
        return params
    }
}
