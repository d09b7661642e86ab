import Foundation
import Hummingbird

/// The issuer's 3-D Secure page a `REDIRECT` sends the payer to
/// (`merchantAction.redirectData.redirectURL`, `/3ds/{challenge}`):
/// server-rendered, without script, showing the amount and the card's last
/// four digits, with three buttons posting `outcome`:
///
/// - `#authenticate` (`approve`): the payment is approved: `CAPTURED` (a
///   sale, one charge) or `PENDING_CAPTURE`;
/// - `#fail` (`decline`): `REJECTED` (statusCode 2) with error 30891001;
/// - `#cancel` (`cancel`): `CANCELLED` (statusCode 1, the customer's
///   cancel) with error 30171001.
///
/// Then the payer goes back (302) to the merchant's `returnUrl` with
/// `paymentId` and `RETURNMAC` added, as Worldline sends them back. A page
/// acts once, and only on a payment still `REDIRECTED`; afterwards it says
/// it is no longer open and changes nothing. `?sandbox_outcome=` completes
/// it at once. The page is ours; Worldline's issuers show their own.
struct WorldlineThreeDSPage: Sendable {
    let simulator: WorldlineSimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let page = self
        HostedPage.registerApproval(on: routes, at: "3ds", parameter: "challenge",
                                    show: { page.show($0) }, complete: { page.complete($0, outcome: $1) })
    }

    static func layout(_ title: String, _ body: String, status: HTTPResponse.Status = .ok) -> Response {
        HostedPage.response(status, HostedPage.layout(title, body, provider: "Worldline (issuer 3-D Secure)"))
    }

    func payment(ofChallenge challenge: String) -> WorldlinePayment? {
        simulator.state.withLock { state in state.paymentOfChallenge[challenge].flatMap { state.payments[$0] } }
    }

    func closed(_ challenge: String) -> Response {
        Self.layout("Authentication no longer open",
                    "<p id=\"status\">This 3-D Secure authentication is no longer open; nothing was changed.</p>")
    }

    func show(_ challenge: String) -> Response {
        guard let payment = payment(ofChallenge: challenge), payment.status == "REDIRECTED" else { return closed(challenge) }
        let amount = HostedPage.escape(WorldlineCards.display(payment.amount, payment.currency))
        return Self.layout("Confirm your payment", """
            <p class="amount" id="amount">\(amount)</p>
            <p>Card ending <span id="last4">\(HostedPage.escape(payment.card.last4))</span></p>
            <form method="post" action="\(HostedPage.escape(challenge))">
            <button id="authenticate" type="submit" name="outcome" value="approve">Authenticate</button>
            <button id="fail" type="submit" name="outcome" value="decline">Fail authentication</button>
            <button id="cancel" type="submit" name="outcome" value="cancel">Cancel</button>
            </form>
            """)
    }

    func complete(_ challenge: String, outcome: String) -> Response {
        guard ["approve", "decline", "cancel"].contains(outcome) else {
            return Self.layout("Unknown outcome", "<p>The outcome must be approve, decline or cancel.</p>", status: .badRequest)
        }
        let finished: WorldlinePayment? = simulator.state.withLock { state in
            guard let id = state.paymentOfChallenge[challenge], var payment = state.payments[id], payment.status == "REDIRECTED" else {
                return nil
            }
            state.closeChallenge(of: id)
            payment.challenge = nil
            switch outcome {
            case "approve":
                state.payments[id] = payment
                state.approve(id)
            case "decline":
                (payment.status, payment.statusCode) = ("REJECTED", 2)
                payment.errors = [WorldlineCards.declineIssue("30891001")]
                payment.updated = Date()
                state.payments[id] = payment
            default:
                (payment.status, payment.statusCode) = ("CANCELLED", 1)
                payment.errors = [WorldlineCards.declineIssue("30171001")]
                payment.captureClosed = true
                payment.updated = Date()
                state.payments[id] = payment
            }
            return state.payments[id]
        }
        if let finished { simulator.deliverWebhooks(for: finished.id) }
        guard let finished, let back = finished.returnURL else { return closed(challenge) }
        return HostedPage.redirect(to: back, adding: ["paymentId": finished.id, "RETURNMAC": finished.returnMAC ?? ""])
    }
}
