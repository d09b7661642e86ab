import CheckoutEngine
import Foundation
import GatewayPayloads

/// How the checkout commands print sessions, attempts and problems.
enum CheckoutOutput {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private struct AttemptDocument: Encodable {
        var attempt: Attempt
        var session: SessionSummary
    }

    private struct SessionSummary: Encodable {
        var id: String
        var status: SessionStatus
        var amount: Money
        var orderId: String
    }

    private struct SessionDocument: Encodable {
        var session: Session
        var availableMethods: [String]
        var instruments: [String: [OfferedInstrument]]
        var events: [SessionEvent]
    }

    static func print(attempt: Attempt, session: Session, json: Bool) throws {
        if json {
            let document = AttemptDocument(
                attempt: attempt, session: SessionSummary(id: session.id, status: session.status, amount: session.amount, orderId: session.orderID))
            Swift.print(String(decoding: try encoder.encode(document), as: UTF8.self))
            return
        }
        Swift.print("attempt \(attempt.id): \(attempt.status.rawValue)")
        Swift.print("  provider   \(attempt.providerID) (\(attempt.routingReason))")
        Swift.print("  amount     \(display(attempt.balance?.authorized ?? attempt.requested))")
        if let reference = attempt.providerReference { Swift.print("  reference  \(reference)") }
        if let action = attempt.action {
            Swift.print("  action     \(action.type.rawValue)" + (action.url.map { " \($0)" } ?? "") + (action.sandboxOtp.map { " (sandbox OTP \($0))" } ?? ""))
        }
        if let problem = attempt.problem { printLines(problem) }
        if attempt.status == .pending, attempt.action == nil {
            Swift.print("  next       reconciled automatically by a running host, or now with: gateway verify \(attempt.id)")
        }
        Swift.print("  session    \(session.id) (\(session.status.rawValue), order \(session.orderID))")
    }

    static func print(session snapshot: SessionSnapshot, events: [SessionEvent], json: Bool) throws {
        if json {
            var session = snapshot.session
            session.instruments = nil   // the stored list; what may be used now is `instruments`
            let document = SessionDocument(session: session, availableMethods: snapshot.availableMethods,
                                           instruments: snapshot.instruments, events: events)
            Swift.print(String(decoding: try encoder.encode(document), as: UTF8.self))
            return
        }
        let session = snapshot.session
        Swift.print("session \(session.id): \(session.status.rawValue), \(display(session.amount)), order \(session.orderID)")
        if !snapshot.availableMethods.isEmpty { Swift.print("  methods    \(snapshot.availableMethods.joined(separator: ", "))") }
        for attempt in session.attempts {
            Swift.print("  attempt    \(attempt.id) \(attempt.status.rawValue) via \(attempt.providerID) (\(attempt.method))")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for event in events {
            var line = "  #\(event.sequence) \(formatter.string(from: event.at)) \(event.type)"
            if let attempt = event.attemptID { line += " \(attempt)" }
            if let amount = event.amount { line += " \(display(amount))" }
            if let detail = event.detail { line += ": \(detail)" }
            Swift.print(line)
        }
    }

    static func print(problem: Problem, json: Bool) throws {
        if json {
            FileHandle.standardOutput.write(try encoder.encode(problem) + Data("\n".utf8))
            return
        }
        Swift.print("refused: \(problem.title) (\(problem.status))")
        printLines(problem)
    }

    private static func printLines(_ problem: Problem) {
        Swift.print("  problem    \(problem.type) (\(problem.code), retryable: \(problem.retryable))")
        Swift.print("  detail     \(problem.detail)")
        Swift.print("  payer (en) \(problem.payerMessage.en)")
        Swift.print("  payer (ar) \(problem.payerMessage.ar)")
    }

    /// `10.00 SAR`, `1.234 KWD`: major units by the currency's exponent.
    static func display(_ money: Money) -> String {
        ((try? money.decimalString()) ?? "\(money.value) minor units") + " " + money.currency
    }
}
