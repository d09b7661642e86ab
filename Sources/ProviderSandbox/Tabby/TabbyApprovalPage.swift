import Foundation
import Hummingbird

/// Tabby's hosted payment page at `web_url` (`GET /checkout/{session_id}`):
/// the amount, the four-instalment plan and three buttons posting to itself.
/// `?sandbox_outcome=approve|decline|cancel` on the page URL completes it at once.
///
/// - approve: the payment turns `AUTHORIZED`; the payer goes to
///   `merchant_urls.success`;
/// - decline: Tabby turns the payer down at the page: `REJECTED`, to
///   `merchant_urls.failure`;
/// - cancel: the payer leaves: `EXPIRED` (Tabby's "cancelled or timed out"),
///   to `merchant_urls.cancel`.
///
/// Each return carries `payment_id`. A payment no longer `CREATED` is not
/// changed again: the payer is sent back according to its current status.
struct TabbyApprovalPage: Sendable {
    let simulator: TabbySimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let page = self
        routes.get("checkout/:sessionId") { request, context -> Response in
            let sessionId = context.parameters.get("sessionId") ?? ""
            guard let outcome = request.uri.queryParameters.get("sandbox_outcome") else { return page.show(sessionId) }
            return page.complete(sessionId, outcome: String(outcome))
        }
        routes.post("checkout/:sessionId") { request, context -> Response in
            let form = String(buffer: try await request.body.collect(upTo: 16 * 1024))
            let outcome = form.split(separator: "&").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 && parts[0] == "outcome" ? String(parts[1]) : nil
            }.first ?? ""
            return page.complete(context.parameters.get("sessionId") ?? "", outcome: outcome)
        }
    }

    private func unknown(_ sessionId: String) -> Response {
        TabbyWire.html(.notFound, Self.layout("Unknown session", "<p>No Tabby checkout session \(Self.escape(String(sessionId.prefix(64)))) exists.</p>"))
    }

    func show(_ sessionId: String) -> Response {
        guard let payment = simulator.state.withLock({ $0.payment(ofSession: sessionId) }) else { return unknown(sessionId) }
        guard payment.status == "CREATED" else {
            return TabbyWire.html(.ok, Self.layout("Payment \(payment.status.lowercased())",
                                                   "<p>This payment is \(Self.escape(payment.status)); there is nothing left to approve.</p>"))
        }
        let currency = payment.total.currency
        let amount = TabbyWire.amount(payment.total.value, currency) + " " + currency
        let share = TabbyWire.amount(payment.total.value / 4 + (payment.total.value % 4 == 0 ? 0 : 1), currency) + " " + currency
        return TabbyWire.html(.ok, Self.layout("Pay later with Tabby", """
            <p class="amount">\(Self.escape(amount))</p>
            <p>\(Self.escape(payment.description ?? "Your order"))</p>
            <p>4 interest-free payments of about \(Self.escape(share)), the first today.</p>
            <form method="post" action="\(Self.escape(sessionId))">
            <button type="submit" name="outcome" value="approve">Confirm and place order</button>
            <button type="submit" name="outcome" value="decline">Decline (simulate Tabby turning the payer down)</button>
            <button type="submit" name="outcome" value="cancel">Cancel and return to the store</button>
            </form>
            """))
    }

    func complete(_ sessionId: String, outcome: String) -> Response {
        guard ["approve", "decline", "cancel"].contains(outcome) else {
            return TabbyWire.html(.badRequest, Self.layout("Unknown outcome", "<p>sandbox_outcome must be approve, decline or cancel.</p>"))
        }
        let found: TabbyPayment? = simulator.state.withLock { state in
            guard var payment = state.payment(ofSession: sessionId) else { return nil }
            guard payment.status == "CREATED" else { return payment }
            payment.status = switch outcome {
            case "approve": "AUTHORIZED"
            case "decline": "REJECTED"
            default: "EXPIRED"
            }
            state.payments[payment.id] = payment
            return payment
        }
        guard let payment = found else { return unknown(sessionId) }
        let back: String? = switch payment.status {
        case "AUTHORIZED", "CLOSED": payment.urls.success
        case "REJECTED": payment.urls.failure
        default: payment.urls.cancel
        }
        guard let back else {
            return TabbyWire.html(.ok, Self.layout("Payment \(payment.status.lowercased())", "<p>The payment is \(Self.escape(payment.status)).</p>"))
        }
        let location = back + (back.contains("?") ? "&" : "?") + "payment_id=" + TabbyWire.query(payment.id)
        return Response(status: .found, headers: [.location: location])
    }

    static func layout(_ title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
        button{display:block;margin-top:.8rem;padding:.6rem 1.2rem;width:100%}.amount{font-size:1.6rem;font-weight:600}
        .note{color:#5b6577;font-size:.85rem}</style></head>
        <body><h1>\(escape(title))</h1>
        \(body)
        <p class="note">Tabby sandbox: no real payment is made.</p></body></html>
        """
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
