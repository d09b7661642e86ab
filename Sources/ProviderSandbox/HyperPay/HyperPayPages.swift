import Foundation
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

    /// The card form's fields and buttons (inside a form), for `brands`
    /// (each one of the simulator's known brands, so safe as markup).
    static func cardFields(brands: [String]) -> String {
        let choices = brands.enumerated().map { index, brand in
            "<label><input type=\"radio\" name=\"brand\" value=\"\(brand)\"\(index == 0 ? " checked" : "") style=\"width:auto\"> \(brand)</label>"
        }.joined(separator: "\n")
        return """
            <fieldset><legend>Brand</legend>\(choices)</fieldset>
            <label for="number">Card number</label><input id="number" name="number" inputmode="numeric" placeholder="4200 0000 0000 0000">
            <label for="holder">Card holder</label><input id="holder" name="holder">
            <label for="expiry">Expiry (MM/YY)</label><input id="expiry" name="expiry" placeholder="12/30">
            <label for="cvv">CVV</label><input id="cvv" name="cvv" inputmode="numeric" placeholder="123">
            <button type="submit" id="pay" name="action" value="pay">Pay now</button>
            <button type="submit" id="cancel" name="action" value="cancel">Cancel</button>
            """
    }

    static let testCardsNote = """
        <p class="note">Test cards: 4200000000000000 (Visa, approved), 5454545454545454 (Mastercard, approved),
        4464040000000007 (mada, approved), 4000000000000077 (approved, for review), 4000000000000002 (declined),
        4000000000009995 (amount exceeds credit). Apple Pay, where offered: choose APPLEPAY and pay without a card.</p>
        """

    /// The sandbox's stand-in for the merchant's page around the widget: the
    /// script and `form.paymentWidgets` returning to the checkout's
    /// `shopperResultUrl` (none: an empty action, and a result page); the
    /// same card form, posting straight to the widget, without scripts.
    static func merchantPage(_ checkout: HyperPayCheckout, brands: [String], script: String, cardForm: String, action: String) -> String {
        layout("Pay with card", """
            <p class="amount">\(HostedPage.escape(amount(checkout)))</p>
            <script src="\(HostedPage.escape(script))"></script>
            <form action="\(HostedPage.escape(checkout.shopperResultUrl ?? ""))" class="paymentWidgets" data-brands="\(brands.joined(separator: " "))"></form>
            <noscript><form method="post" action="\(HostedPage.escape(action))" autocomplete="off">\(cardForm)</form></noscript>
            \(testCardsNote)
            """)
    }

    /// `paymentWidgets.js` for `checkout`: on the page that loads it, the
    /// first `form.paymentWidgets` becomes the card form for the brands its
    /// `data-brands` names (of `known`; none: `fallback`), posting to `post`
    /// with the form's own `action` as `shopperResultUrl`.
    static func widgetScript(_ checkout: HyperPayCheckout, post: String, known: [String], fallback: [String]) -> String {
        """
        (function () {
          var post = \(jsString(post)), amount = \(jsString(amount(checkout)));
          var known = \(jsArray(known)), fallback = \(jsArray(fallback));
          function render() {
            var form = document.querySelector("form.paymentWidgets");
            if (!form || form.getAttribute("data-rendered")) return;
            var back = form.getAttribute("action") || "";
            var asked = (form.getAttribute("data-brands") || "").toUpperCase().split(/[\\s,]+/);
            var brands = asked.filter(function (b) { return known.indexOf(b) >= 0; });
            if (brands.length === 0) brands = fallback;
            form.setAttribute("data-rendered", "1");
            form.setAttribute("method", "post");
            form.setAttribute("action", post);
            form.setAttribute("autocomplete", "off");
            var html = '<p class="amount"></p><fieldset><legend>Brand</legend>';
            brands.forEach(function (b, i) {
              html += '<label><input type="radio" name="brand" value="' + b + '"' + (i === 0 ? ' checked' : '') + ' style="width:auto"> ' + b + '</label>';
            });
            html += '</fieldset>' +
              '<label for="number">Card number</label><input id="number" name="number" inputmode="numeric">' +
              '<label for="holder">Card holder</label><input id="holder" name="holder">' +
              '<label for="expiry">Expiry (MM/YY)</label><input id="expiry" name="expiry">' +
              '<label for="cvv">CVV</label><input id="cvv" name="cvv" inputmode="numeric">' +
              '<input type="hidden" name="shopperResultUrl">' +
              '<button type="submit" id="pay" name="action" value="pay">Pay now</button>' +
              '<button type="submit" id="cancel" name="action" value="cancel">Cancel</button>';
            form.innerHTML = html;
            form.querySelector("p.amount").textContent = amount;
            form.querySelector("input[name=shopperResultUrl]").value = back;
          }
          if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render); else render();
        })();

        """
    }

    /// `text` as a JavaScript string literal (JSON's, with `<` escaped so it cannot close a script element).
    static func jsString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast()).replacingOccurrences(of: "<", with: "\\u003c")
    }

    static func jsArray(_ items: [String]) -> String { "[" + items.map(jsString).joined(separator: ", ") + "]" }

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
