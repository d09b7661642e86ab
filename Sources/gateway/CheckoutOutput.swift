import CheckoutEngine
import Foundation
import GatewayPayloads

/// How the checkout commands print sessions, attempts and problems. With
/// `--json` the documents are the API's own (``JSONPayload``: the same
/// member names, wire dates), indented by ``JSONPretty``.
enum CheckoutOutput {
    /// Prints what `write` writes, indented, and a newline.
    private static func printJSON(_ write: (inout JSONWriter) -> Void) {
        var writer = JSONWriter(capacity: 1024)
        write(&writer)
        Swift.print(String(decoding: JSONPretty.indented(writer.bytes), as: UTF8.self))
    }

    static func print(attempt: Attempt, session: Session, json: Bool) throws {
        if json {
            printJSON { w in
                w.beginObject()
                w.member("attempt", attempt)
                w.key("session")
                w.beginObject()
                w.member("id", session.id)
                w.member("status", session.status.rawValue)
                w.member("amount", session.amount)
                w.member("orderId", session.orderID)
                w.endObject()
                w.endObject()
            }
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
            printJSON { w in
                w.beginObject()
                w.member("session", session)
                w.key("availableMethods")
                w.beginArray()
                for method in snapshot.availableMethods { w.string(method) }
                w.endArray()
                w.key("instruments")
                w.beginObject()
                for method in snapshot.instruments.keys.sorted() {
                    w.key(method)
                    w.beginArray()
                    for instrument in snapshot.instruments[method] ?? [] { instrument.write(to: &w) }
                    w.endArray()
                }
                w.endObject()
                w.key("events")
                w.beginArray()
                for event in events { event.write(to: &w) }
                w.endArray()
                w.endObject()
            }
            return
        }
        let session = snapshot.session
        Swift.print("session \(session.id): \(session.status.rawValue), \(display(session.amount)), order \(session.orderID)")
        if !snapshot.availableMethods.isEmpty { Swift.print("  methods    \(snapshot.availableMethods.joined(separator: ", "))") }
        for attempt in session.attempts {
            Swift.print("  attempt    \(attempt.id) \(attempt.status.rawValue) via \(attempt.providerID) (\(attempt.method))")
        }
        for event in events {
            var line = "  #\(event.sequence) \(WireDate.string(event.at)) \(event.type)"
            if let attempt = event.attemptID { line += " \(attempt)" }
            if let amount = event.amount { line += " \(display(amount))" }
            if let detail = event.detail { line += ": \(detail)" }
            Swift.print(line)
        }
    }

    static func print(problem: Problem, json: Bool) throws {
        if json {
            printJSON { w in problem.write(to: &w) }
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
