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
        HostedPage.registerApproval(on: routes, at: "checkout", parameter: "sessionId",
                                    show: { show($0) }, complete: { complete($0, outcome: $1) })
    }

    private func unknown(_ sessionId: String) -> Response {
        HostedPage.response(.notFound, Self.layout("Unknown session", "<p>No Tabby checkout session \(HostedPage.escape(String(sessionId.prefix(64)))) exists.</p>"))
    }

    func show(_ sessionId: String) -> Response {
        guard let payment = simulator.state.withLock({ $0.payment(ofSession: sessionId) }) else { return unknown(sessionId) }
        guard payment.status == "CREATED" else {
            return HostedPage.response(.ok, Self.layout("Payment \(payment.status.lowercased())",
                                                        "<p>This payment is \(HostedPage.escape(payment.status)); there is nothing left to approve.</p>"))
        }
        let currency = payment.total.currency
        let amount = TabbyWire.amount(payment.total.value, currency) + " " + currency
        let share = TabbyWire.amount(payment.total.value / 4 + (payment.total.value % 4 == 0 ? 0 : 1), currency) + " " + currency
        return HostedPage.response(.ok, Self.layout("Pay later with Tabby", """
            <p class="amount">\(HostedPage.escape(amount))</p>
            <p>\(HostedPage.escape(payment.description ?? "Your order"))</p>
            <p>4 interest-free payments of about \(HostedPage.escape(share)), the first today.</p>
            <form method="post" action="\(HostedPage.escape(sessionId))">
            <button type="submit" name="outcome" value="approve">Confirm and place order</button>
            <button type="submit" name="outcome" value="decline">Decline (simulate Tabby turning the payer down)</button>
            <button type="submit" name="outcome" value="cancel">Cancel and return to the store</button>
            </form>
            """))
    }

    func complete(_ sessionId: String, outcome: String) -> Response {
        guard ["approve", "decline", "cancel"].contains(outcome) else {
            return HostedPage.response(.badRequest, Self.layout("Unknown outcome", "<p>sandbox_outcome must be approve, decline or cancel.</p>"))
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
            return HostedPage.response(.ok, Self.layout("Payment \(payment.status.lowercased())", "<p>The payment is \(HostedPage.escape(payment.status)).</p>"))
        }
        return HostedPage.redirect(to: back, adding: ["payment_id": payment.id])
    }

    static func layout(_ title: String, _ body: String) -> String {
        HostedPage.layout(title, body, provider: "Tabby")
    }
}
