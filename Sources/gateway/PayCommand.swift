import ArgumentParser
import CheckoutEngine
import Foundation
import GatewayPayloads
import PaymentGateway

/// `gateway pay`: one checkout through the engine, in-process: a session,
/// then an attempt, stored in `--data`. An ops smoke test, and a newcomer's
/// first payment.
struct PayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pay",
        abstract: "Run one checkout (session + attempt) through the engine and print the attempt.",
        discussion: """
            Exit status: 0 when the attempt succeeded, was authorized or is pending; \
            2 when it failed or was cancelled; 1 when the request was refused (the problem is printed).
            """)

    @OptionGroup var host: HostOptions

    @Option(help: "The payment method (visa, mada, stcpay, ...).")
    var method: String

    @Option(help: "The amount in minor units (1000 SAR = 10.00; 1234 KWD = 1.234).")
    var amount: Int64

    @Option(help: "ISO 4217 currency code.")
    var currency: String

    @Option(help: "ISO 3166-1 alpha-2 country of the payer.")
    var country: String?

    @Option(help: "Route to this provider only.")
    var provider: String?

    @Option(help: "The mock gateway's scenario (instrument.scenario): success, card_declined, network_drop, ...")
    var scenario: String?

    @Option(name: .customLong("idempotency-key"), help: "Run once per key: the same command again replays the first answer.")
    var idempotencyKey: String?

    @Option(name: .customLong("order-id"), help: "The merchant's order reference (derived from the idempotency key, or generated).")
    var orderID: String?

    @Option(help: "automatic (charge now) or manual (authorize; capture later).")
    var capture: CaptureMode = .automatic

    @Option(help: "test or live: only providers of this mode may take the payment.")
    var mode: PaymentMode = .test

    @Flag(help: "Print the session and attempt as JSON.")
    var json = false

    @Flag(help: "Log the host's work to standard error.")
    var verbose = false

    func run() async throws {
        try await HostSetup.withGateway(host, verbose: verbose) { gateway in
            let orderID = orderID ?? idempotencyKey.map { "cli-\($0)" } ?? "cli-\(UUID().uuidString.prefix(8).lowercased())"
            let instrument = scenario.map { ["scenario": JSONValue.string($0)] }
            try await reportingProblems(json: json) {
                let session = try await gateway.createSession(
                    NewSession(amount: Money(value: amount, currency: currency.uppercased()), country: country?.uppercased(), orderId: orderID, capture: capture),
                    idempotencyKey: idempotencyKey.map { "\($0):session" }, mode: mode)
                let attempt = try await gateway.attempt(
                    session: session.session.id, NewAttempt(method: method, provider: provider, instrument: instrument),
                    idempotencyKey: idempotencyKey.map { "\($0):attempt" })
                let current = try await gateway.session(session.session.id).session
                try CheckoutOutput.print(attempt: attempt, session: current, json: json)
                if attempt.status == .failed || attempt.status == .cancelled { throw ExitCode(2) }
            }
        }
    }
}

extension CaptureMode: ExpressibleByArgument {}
extension PaymentMode: ExpressibleByArgument {}

/// Runs a checkout command's body; a refusal is printed as its problem and
/// ends the command with exit status 1.
func reportingProblems(json: Bool, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let problem as Problem {
        try CheckoutOutput.print(problem: problem, json: json)
        throw ExitCode(1)
    }
}

/// `gateway verify`: ask the provider where an attempt stands.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an attempt (a payment) with its provider; a pending one is finalised when the provider knows.")

    @OptionGroup var host: HostOptions

    @Argument(help: "The attempt id (att_...).")
    var attempt: String

    @Flag(help: "Print the session and attempt as JSON.")
    var json = false

    func run() async throws {
        try await HostSetup.withGateway(host) { gateway in
            try await reportingProblems(json: json) {
                let attempt = try await gateway.verify(attempt: self.attempt)
                let session = try await gateway.session(ofPayment: attempt.id).session
                try CheckoutOutput.print(attempt: attempt, session: session, json: json)
            }
        }
    }
}

/// `gateway session`: a session, its attempts and its event log.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session", abstract: "Show a session, its attempts and its event log (the audit trail).")

    @OptionGroup var host: HostOptions

    @Argument(help: "The session id (ses_...) or one of its attempt ids (att_...).")
    var id: String

    @Flag(help: "Print as JSON.")
    var json = false

    func run() async throws {
        try await HostSetup.withGateway(host) { gateway in
            try await reportingProblems(json: json) {
                let snapshot = id.hasPrefix("att_") ? try await gateway.session(ofPayment: id) : try await gateway.session(id)
                let events = try await gateway.recordedEvents(ofSession: snapshot.session.id)
                try CheckoutOutput.print(session: snapshot, events: events, json: json)
            }
        }
    }
}

/// `gateway reconcile`: one reconciliation pass, as a running host makes every second.
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Verify every due pending attempt (and any a crash left in flight), and expire abandoned sessions, once.")

    @OptionGroup var host: HostOptions

    func run() async throws {
        try await HostSetup.withGateway(host) { gateway in
            let pass = await gateway.reconcile()
            print("verified \(pass.verified), could not verify \(pass.failed), expired \(pass.expired) sessions")
        }
    }
}
