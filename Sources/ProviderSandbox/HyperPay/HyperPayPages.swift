import GatewayPayloads

/// The HTML of the simulated widget: the card form, the 3-D Secure step and
/// short result pages. Plain forms, usable in any browser.
enum HyperPayPages {
    /// The widget's style: a card form in a fieldset.
    static let style = """
        fieldset{border:1px solid #c9d1e0;border-radius:.5rem;padding:1rem}label{display:block;margin:.6rem 0 .2rem}
        input{width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1rem;padding:.6rem 1.2rem}
        .amount{font-size:1.6rem;font-weight:600}.note{color:#5b6577;font-size:.85rem}
        """

    static func layout(_ title: String, _ body: String) -> String {
        HostedPage.layout(title, body, provider: "HyperPay", style: style)
    }

    static func amount(_ checkout: HyperPayCheckout) -> String {
        ((try? checkout.amount.decimalString()) ?? "?") + " " + checkout.amount.currency
    }

    static func cardForm(_ checkout: HyperPayCheckout, brands: [String], action: String) -> String {
        let choices = brands.enumerated().map { index, brand in
            "<label><input type=\"radio\" name=\"brand\" value=\"\(brand)\"\(index == 0 ? " checked" : "") style=\"width:auto\"> \(brand)</label>"
        }.joined(separator: "\n")
        return layout("Pay with card", """
            <p class="amount">\(HostedPage.escape(amount(checkout)))</p>
            <form method="post" action="\(HostedPage.escape(action))" autocomplete="off">
            <fieldset><legend>Brand</legend>\(choices)</fieldset>
            <label for="number">Card number</label><input id="number" name="number" inputmode="numeric" placeholder="4200 0000 0000 0000">
            <label for="holder">Card holder</label><input id="holder" name="holder">
            <label for="expiry">Expiry (MM/YY)</label><input id="expiry" name="expiry" placeholder="12/30">
            <label for="cvv">CVV</label><input id="cvv" name="cvv" inputmode="numeric" placeholder="123">
            <button type="submit" name="action" value="pay">Pay now</button>
            <button type="submit" name="action" value="cancel">Cancel</button>
            </form>
            <p class="note">Test cards: 4200000000000000 (Visa, approved), 5454545454545454 (Mastercard, approved),
            4464040000000007 (mada, approved), 4000000000000077 (approved, for review), 4000000000000002 (declined),
            4000000000009995 (amount exceeds credit). Apple Pay, where offered: choose APPLEPAY and pay without a card.</p>
            """)
    }

    static func threeDSecure(_ checkout: HyperPayCheckout, brand: String, last4: String, action: String) -> String {
        layout("3-D Secure", """
            <p>Your bank asks you to confirm the payment of <span class="amount">\(HostedPage.escape(amount(checkout)))</span>
            with your \(HostedPage.escape(brand)) card ending in \(HostedPage.escape(last4)).</p>
            <form method="post" action="\(HostedPage.escape(action))">
            <button type="submit" name="result" value="authenticate">Authenticate</button>
            <button type="submit" name="result" value="fail">Fail authentication</button>
            </form>
            """)
    }

    static func message(_ title: String, _ text: String) -> String {
        layout(title, "<p>\(HostedPage.escape(text))</p>")
    }
}
