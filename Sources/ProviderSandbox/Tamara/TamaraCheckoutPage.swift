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
        HostedPage.registerApproval(on: routes, at: "checkout", parameter: "checkoutId",
                                    show: { show($0) }, complete: { complete($0, outcome: $1) })
    }

    private func order(_ checkoutId: String) -> TamaraOrder? {
        simulator.state.withLock { state in state.byCheckout[checkoutId].flatMap { state.order($0) } }
    }

    func show(_ checkoutId: String) -> Response {
        guard let order = order(checkoutId) else {
            return HostedPage.response(.notFound, Self.layout("Unknown checkout", "<p>No Tamara checkout \(HostedPage.escape(String(checkoutId.prefix(64)))) exists.</p>"))
        }
        guard order.status == "new" else {
            return HostedPage.response(.ok, Self.layout("Order \(order.status)", "<p>This order is \(HostedPage.escape(order.status)); there is nothing left to approve.</p>"))
        }
        let amount = ((try? order.total.decimalString()) ?? "?") + " " + order.total.currency
        let plan = order.paymentType == "PAY_NOW" ? "Pay in full now" : "Split in \(order.instalments ?? 3) interest-free payments"
        return HostedPage.response(.ok, Self.layout("Pay with Tamara", """
            <p class="amount">\(HostedPage.escape(amount))</p>
            <p>\(HostedPage.escape(order.description))</p><p>\(HostedPage.escape(plan))</p>
            <form method="post" action="\(HostedPage.escape(order.checkoutId))">
            <button type="submit" name="outcome" value="approve">Approve and pay</button>
            <button type="submit" name="outcome" value="decline">Decline (simulate a refusal)</button>
            <button type="submit" name="outcome" value="cancel">Cancel and return to the store</button>
            </form>
            """))
    }

    func complete(_ checkoutId: String, outcome: String) -> Response {
        guard ["approve", "decline", "cancel"].contains(outcome) else {
            return HostedPage.response(.badRequest, Self.layout("Unknown outcome", "<p>sandbox_outcome must be approve, decline or cancel.</p>"))
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
            return HostedPage.response(.notFound, Self.layout("Unknown checkout", "<p>No Tamara checkout \(HostedPage.escape(String(checkoutId.prefix(64)))) exists.</p>"))
        }
        let (back, paymentStatus): (String?, String) = switch order.status {
        case "new": (order.urls.cancel, "canceled")
        case "declined", "expired": (order.urls.failure, order.status)
        case "canceled": (order.urls.cancel, "canceled")
        default: (order.urls.success, "approved")
        }
        guard let back else {
            return HostedPage.response(.ok, Self.layout("Order \(paymentStatus)", "<p>The order is \(HostedPage.escape(order.status)).</p>"))
        }
        return HostedPage.redirect(to: back, adding: ["orderId": order.orderId, "paymentStatus": paymentStatus])
    }

    static func layout(_ title: String, _ body: String) -> String {
        HostedPage.layout(title, body, provider: "Tamara")
    }
}
