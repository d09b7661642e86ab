import Foundation
import GatewayPayloads
import Hummingbird

/// The hosted approval page at `checkout_url` (`GET /checkout/{checkout_id}`):
/// the order, its instalment plan and three buttons, posting to itself.
/// `?sandbox_outcome=approve|decline|cancel` on the page URL completes it at once.
///
/// - approve: the order turns `approved`, the `order_approved` notification
///   is recorded, and the payer goes to `merchant_url.success`;
/// - decline: Tamara refuses the payer: `declined`, to `merchant_url.failure`;
/// - cancel: the payer leaves; the order stays `new` (Tamara's online order
///   flow has no payer-cancel status: an abandoned order expires, or the
///   merchant voids the checkout), to `merchant_url.cancel`.
///
/// Each return carries `orderId` and `paymentStatus` (approved, declined,
/// canceled). An order that is no longer `new` is not changed again: the
/// payer is sent back according to its current status.
struct TamaraCheckoutPage: Sendable {
    let simulator: TamaraSimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let page = self
        routes.get("checkout/:checkoutId") { request, context -> Response in
            let checkoutId = context.parameters.get("checkoutId") ?? ""
            guard let outcome = request.uri.queryParameters.get("sandbox_outcome") else { return page.show(checkoutId) }
            return page.complete(checkoutId, outcome: String(outcome))
        }
        routes.post("checkout/:checkoutId") { request, context -> Response in
            let buffer = try await request.body.collect(upTo: 16 * 1024)
            let form = String(buffer: buffer)
            let outcome = form.split(separator: "&").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 && parts[0] == "outcome" ? String(parts[1]) : nil
            }.first ?? ""
            return page.complete(context.parameters.get("checkoutId") ?? "", outcome: outcome)
        }
    }

    private func order(_ checkoutId: String) -> TamaraOrder? {
        simulator.state.withLock { state in state.byCheckout[checkoutId].flatMap { state.order($0) } }
    }

    func show(_ checkoutId: String) -> Response {
        guard let order = order(checkoutId) else {
            return TamaraWire.html(.notFound, Self.layout("Unknown checkout", "<p>No Tamara checkout \(Self.escape(String(checkoutId.prefix(64)))) exists.</p>"))
        }
        guard order.status == "new" else {
            return TamaraWire.html(.ok, Self.layout("Order \(order.status)", "<p>This order is \(Self.escape(order.status)); there is nothing left to approve.</p>"))
        }
        let amount = ((try? order.total.decimalString()) ?? "?") + " " + order.total.currency
        let plan = order.paymentType == "PAY_NOW" ? "Pay in full now" : "Split in \(order.instalments ?? 3) interest-free payments"
        return TamaraWire.html(.ok, Self.layout("Pay with Tamara", """
            <p class="amount">\(Self.escape(amount))</p>
            <p>\(Self.escape(order.description))</p><p>\(Self.escape(plan))</p>
            <form method="post" action="\(Self.escape(order.checkoutId))">
            <button type="submit" name="outcome" value="approve">Approve and pay</button>
            <button type="submit" name="outcome" value="decline">Decline (simulate a refusal)</button>
            <button type="submit" name="outcome" value="cancel">Cancel and return to the store</button>
            </form>
            """))
    }

    func complete(_ checkoutId: String, outcome: String) -> Response {
        guard ["approve", "decline", "cancel"].contains(outcome) else {
            return TamaraWire.html(.badRequest, Self.layout("Unknown outcome", "<p>sandbox_outcome must be approve, decline or cancel.</p>"))
        }
        let found: TamaraOrder? = simulator.state.withLock { state in
            guard let id = state.byCheckout[checkoutId], var order = state.order(id) else { return nil }
            guard order.status == "new" else { return order }
            switch outcome {
            case "approve":
                order.status = "approved"
                order.events.append("order_approved")
            case "decline":
                order.status = "declined"
                order.events.append("order_declined")
            default:
                break
            }
            state.orders[id] = order
            return order
        }
        guard let order = found else {
            return TamaraWire.html(.notFound, Self.layout("Unknown checkout", "<p>No Tamara checkout \(Self.escape(String(checkoutId.prefix(64)))) exists.</p>"))
        }
        let (back, paymentStatus): (String?, String) = switch order.status {
        case "new": (order.urls.cancel, "canceled")
        case "declined", "expired": (order.urls.failure, order.status)
        case "canceled": (order.urls.cancel, "canceled")
        default: (order.urls.success, "approved")
        }
        guard let back else {
            return TamaraWire.html(.ok, Self.layout("Order \(paymentStatus)", "<p>The order is \(Self.escape(order.status)).</p>"))
        }
        let location = back + (back.contains("?") ? "&" : "?") + "orderId=" + TamaraWire.query(order.orderId) + "&paymentStatus=" + paymentStatus
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
        <p class="note">Tamara sandbox: no real payment is made.</p></body></html>
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
