import Foundation
import PaymentFields

/// `POST /v2/{merchantId}/payments`: a card payment.
///
/// The body, as Direct's `CreatePaymentRequest` names it:
/// `order.amountOfMoney{amount, currencyCode}`, `order.references.merchantReference`,
/// and the card as one of
/// - `encryptedCustomerInput`: the payer's device's JWE (``WorldlineJWE``,
///   ``WorldlineDevice``). It must decrypt, name a live client session of
///   this merchant, and carry a nonce not used before;
/// - `cardPaymentMethodSpecificInput.token` (with `paymentProductId`): a
///   stored card (the seeded `sandbox-token-visa` and `sandbox-token-3ds`);
/// - `cardPaymentMethodSpecificInput.card{cardNumber, expiryDate, cvv}`: a
///   plain card, as a PCI merchant sends it.
///
/// `cardPaymentMethodSpecificInput.authorizationMode` is `SALE` (captured
/// at once; the default here is ours), `PRE_AUTHORIZATION` or
/// `FINAL_AUTHORIZATION` (captured later). A card asking for 3-D Secure
/// needs `threeDSecure.redirectionData.returnUrl`.
///
/// Answers: 201 `{creationOutput, payment}` approved (`CAPTURED` 9 for a
/// sale, one charge; `PENDING_CAPTURE` 5 otherwise); 201 with
/// `merchantAction` REDIRECT to the 3-D Secure page (`REDIRECTED` 46); 402
/// `{errorId, errors, paymentResult{payment}}` declined (`REJECTED` 2);
/// 400 with `propertyName` for bad input. The card number and CVV are read
/// for the outcome, then dropped: only the product, BIN, last four, length
/// and expiry are kept.
extension WorldlineServerAPI {
    /// The card a create pays with, and what it will do.
    struct ResolvedCard {
        var card: WorldlineCard
        var outcome: WorldlineCards.Outcome
        /// The encrypted input's nonce and its session's end, to be marked used.
        var nonce: (value: String, until: Date)?
    }

    /// `feedbacks.webhooksUrls` (and the deprecated `feedbacks.webhookUrl`):
    /// absolute http(s) URLs, at most 10.
    static func webhookURLs(_ feedbacks: Any?) throws -> [String] {
        guard let feedbacks else { return [] }
        guard let object = feedbacks as? [String: Any] else { throw WorldlineWire.Refusal.invalid("feedbacks", "feedbacks must be an object") }
        var urls: [String] = []
        if let one = object["webhookUrl"] { urls.append(contentsOf: [one as? String ?? ""]) }
        if let list = object["webhooksUrls"] {
            guard let strings = list as? [String] else { throw WorldlineWire.Refusal.invalid("feedbacks.webhooksUrls", "webhooksUrls must be a list of URLs") }
            urls += strings
        }
        guard urls.count <= 10 else { throw WorldlineWire.Refusal.invalid("feedbacks.webhooksUrls", "At most 10 webhook URLs") }
        for url in urls where !["http", "https"].contains(URL(string: url)?.scheme ?? "") || URL(string: url)?.host == nil {
            throw WorldlineWire.Refusal.invalid("feedbacks.webhooksUrls", "Each webhook URL must be an absolute http(s) URL")
        }
        return urls
    }

    /// The created payment's URL, for `Location` on a 201.
    func location(_ merchant: String, _ id: String) -> String { base() + "/v2/\(merchant)/payments/\(id)" }

    func create(_ merchant: String, _ body: [String: Any]) throws -> WorldlineAnswer {
        let order = body["order"] as? [String: Any]
        guard let money = order?["amountOfMoney"] as? [String: Any] else { throw WorldlineWire.Refusal.missing("order.amountOfMoney") }
        guard money["amount"] != nil else { throw WorldlineWire.Refusal.missing("order.amountOfMoney.amount") }
        guard let amount = WorldlineWire.integer(money["amount"]), amount > 0 else {
            throw WorldlineWire.Refusal.invalid("order.amountOfMoney.amount", "The amount must be a positive integer in minor units")
        }
        guard let currency = money["currencyCode"] as? String else { throw WorldlineWire.Refusal.missing("order.amountOfMoney.currencyCode") }
        guard WorldlineCards.currencies[currency] != nil else {
            throw WorldlineWire.Refusal.invalid("order.amountOfMoney.currencyCode", "Unknown or unsupported currency")
        }
        let reference = (order?["references"] as? [String: Any])?["merchantReference"] as? String
        if let reference, reference.isEmpty || reference.count > 50 {
            throw WorldlineWire.Refusal.invalid("order.references.merchantReference", "The merchantReference must be 1 to 50 characters")
        }
        let webhookURLs = try Self.webhookURLs(body["feedbacks"])
        let input = body["cardPaymentMethodSpecificInput"] as? [String: Any] ?? [:]
        let mode = input["authorizationMode"] as? String ?? "SALE"
        guard ["SALE", "PRE_AUTHORIZATION", "FINAL_AUTHORIZATION"].contains(mode) else {
            throw WorldlineWire.Refusal.invalid("cardPaymentMethodSpecificInput.authorizationMode",
                                                "authorizationMode must be SALE, PRE_AUTHORIZATION or FINAL_AUTHORIZATION")
        }
        let redirection = (input["threeDSecure"] as? [String: Any])?["redirectionData"] as? [String: Any]
        let returnURL = redirection?["returnUrl"] as? String
        if let returnURL, URL(string: returnURL)?.scheme == nil {
            throw WorldlineWire.Refusal.invalid("cardPaymentMethodSpecificInput.threeDSecure.redirectionData.returnUrl", "The returnUrl must be an absolute URL")
        }
        let resolved = try resolveCard(merchant, body, input)
        if resolved.outcome == .challenge, returnURL == nil {
            throw WorldlineWire.Refusal.missing("cardPaymentMethodSpecificInput.threeDSecure.redirectionData.returnUrl")
        }

        var draft = WorldlinePayment(id: "", merchantID: merchant, merchantReference: reference, amount: amount, currency: currency,
                                     authorizationMode: mode, card: resolved.card, status: "CREATED", statusCode: 0)
        draft.webhookURLs = webhookURLs
        switch resolved.outcome {
        case .decline(let code):
            (draft.status, draft.statusCode, draft.errors) = ("REJECTED", 2, [WorldlineCards.declineIssue(code)])
        case .challenge:
            (draft.status, draft.statusCode) = ("REDIRECTED", 46)
            draft.challenge = WorldlineSimulator.randomHex(16)
            draft.returnMAC = SimulatorJSON.uuid()
            draft.returnURL = returnURL
        case .approve:
            break
        }
        let template = draft
        let nonce = resolved.nonce
        let approved = resolved.outcome == .approve
        let stored: WorldlinePayment? = simulator.state.withLock { state in
            if let nonce, !state.useNonce(nonce.value, until: nonce.until) { return nil }
            var payment = template
            payment.id = state.newPaymentID()
            state.add(payment)
            if approved { state.approve(payment.id) }
            return state.payments[payment.id]
        }
        guard let payment = stored else {
            throw WorldlineWire.Refusal(400, "1203", "ENCRYPTED_CUSTOMER_INPUT_ALREADY_USED",
                                        "This encrypted customer input was already submitted", property: "encryptedCustomerInput")
        }
        simulator.deliverWebhooks(for: payment.id)

        var creation: [String: Any] = ["isNewToken": false, "tokenizationSucceeded": false]
        if let token = payment.card.token { creation["token"] = token }
        switch resolved.outcome {
        case .decline:
            var document = WorldlineWire.errorList(payment.errors)
            document["paymentResult"] = ["creationOutput": creation, "payment": WorldlineWire.payment(payment)]
            return WorldlineAnswer(402, document)
        case .challenge:
            let redirect: [String: Any] = ["redirectURL": base() + "/3ds/" + (payment.challenge ?? ""), "RETURNMAC": payment.returnMAC ?? ""]
            return WorldlineAnswer(201, ["creationOutput": creation, "payment": WorldlineWire.payment(payment),
                                         "merchantAction": ["actionType": "REDIRECT", "redirectData": redirect] as [String: Any]],
                                   location: location(merchant, payment.id))
        case .approve:
            return WorldlineAnswer(201, ["creationOutput": creation, "payment": WorldlineWire.payment(payment)], location: location(merchant, payment.id))
        }
    }

    /// The card of a create: from the encrypted input, a token, or a plain card.
    func resolveCard(_ merchant: String, _ body: [String: Any], _ input: [String: Any]) throws -> ResolvedCard {
        let productId = input["paymentProductId"].flatMap { WorldlineWire.integer($0) }.map { Int($0) }
        if let encrypted = body["encryptedCustomerInput"] {
            let undecryptable = WorldlineWire.Refusal(400, "1201", "INVALID_ENCRYPTED_CUSTOMER_INPUT",
                                                      "The encrypted customer input could not be decrypted", property: "encryptedCustomerInput")
            guard let jwe = encrypted as? String, let plaintext = try? WorldlineJWE.decrypt(jwe),
                  let payload = try? JSONSerialization.jsonObject(with: Data(plaintext)) as? [String: Any],
                  let sessionID = payload["clientSessionId"] as? String, let nonce = payload["nonce"] as? String, !nonce.isEmpty,
                  let product = WorldlineWire.integer(payload["paymentProductId"]),
                  let values = payload["paymentValues"] as? [[String: Any]] else { throw undecryptable }
            guard let session = simulator.state.withLock({ $0.liveSession(sessionID, merchant: merchant) }) else {
                throw WorldlineWire.Refusal(400, "1202", "INVALID_CLIENT_SESSION",
                                            "The client session of the encrypted customer input is unknown or has expired",
                                            property: "encryptedCustomerInput")
            }
            var fields: [String: String] = [:]
            for value in values {
                if let key = value["key"] as? String, let text = value["value"] as? String { fields[key] = text }
            }
            let (card, outcome) = try plainCard(number: fields["cardNumber"], expiry: fields["expiryDate"], cvv: fields["cvv"],
                                                productId: Int(product))
            return ResolvedCard(card: card, outcome: outcome, nonce: (nonce, session.expiresAt))
        }
        if let token = input["token"] {
            guard let token = token as? String, let stored = WorldlineCards.tokens[token] else {
                throw WorldlineWire.Refusal(400, "1204", "UNKNOWN_TOKEN", "The token is unknown for this merchant",
                                            property: "cardPaymentMethodSpecificInput.token")
            }
            if let productId, productId != stored.card.productId {
                throw WorldlineWire.Refusal.invalid("cardPaymentMethodSpecificInput.paymentProductId", "The token's card is of another product")
            }
            return ResolvedCard(card: stored.card, outcome: stored.outcome, nonce: nil)
        }
        if let card = input["card"] as? [String: Any] {
            let (kept, outcome) = try plainCard(number: card["cardNumber"] as? String, expiry: card["expiryDate"] as? String,
                                                cvv: card["cvv"] as? String, productId: productId)
            return ResolvedCard(card: kept, outcome: outcome, nonce: nil)
        }
        throw WorldlineWire.Refusal.missing("encryptedCustomerInput")
    }

    /// Checks a card's fields and keeps what may be kept of it.
    func plainCard(number: String?, expiry: String?, cvv: String?, productId: Int?) throws -> (WorldlineCard, WorldlineCards.Outcome) {
        let prefix = "cardPaymentMethodSpecificInput.card."
        guard let number else { throw WorldlineWire.Refusal.missing(prefix + "cardNumber") }
        guard number.allSatisfy({ $0.isASCII && $0.isNumber }), let product = WorldlineCards.productId(ofIIN: number),
              WorldlineCards.lengths(of: product).contains(number.count), Luhn.passes(number) else {
            throw WorldlineWire.Refusal.invalid(prefix + "cardNumber", "The card number is not valid")
        }
        if let productId, productId != product {
            throw WorldlineWire.Refusal.invalid("cardPaymentMethodSpecificInput.paymentProductId", "The card number is not of this payment product")
        }
        guard let expiry else { throw WorldlineWire.Refusal.missing(prefix + "expiryDate") }
        guard let mmyy = WorldlineCards.expiry(expiry) else { throw WorldlineWire.Refusal.invalid(prefix + "expiryDate", "The expiryDate must be MMYY") }
        if let cvv, cvv.range(of: "^[0-9]{3,4}$", options: .regularExpression) == nil {
            throw WorldlineWire.Refusal.invalid(prefix + "cvv", "The cvv must be 3 or 4 digits")
        }
        var outcome = WorldlineCards.outcome(of: number, cvv: cvv)
        if outcome == .approve || outcome == .challenge, WorldlineCards.expired(mmyy) { outcome = .decline("30331001") }
        let card = WorldlineCard(productId: product, bin: String(number.prefix(6)), last4: String(number.suffix(4)), length: number.count,
                                 expiry: mmyy)
        return (card, outcome)
    }
}
