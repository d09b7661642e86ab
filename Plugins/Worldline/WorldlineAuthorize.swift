import Foundation
import GatewayAdapterSDK

/// authorize: `POST /v2/{merchant}/payments`.
///
/// | `instrument` | what is sent |
/// |---|---|
/// | `{"encryptedCustomerInput": "<compact JWE>"}` | the JWE a device SDK made with the session's client session |
/// | `{"token": "<Worldline token>"}` | a stored card, server to server (`paymentProductId` from the method) |
///
/// Automatic capture is a `SALE`, manual a `PRE_AUTHORIZATION` (partly
/// capturable, cancellable). 3-D Secure, when the issuer asks, is a
/// `three_ds` redirect to Worldline's page, back to `returnUrl`.
extension WorldlineAdapter {
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard let product = Self.products[request.method] else {
            throw AdapterError.invalidRequest("method \(request.method.prefix(40)) is not offered by Worldline (\(Self.methods.joined(separator: ", ")))")
        }
        guard request.amount.value > 0, Self.currencies.contains(request.amount.currency) else {
            throw AdapterError.invalidRequest("Worldline takes a positive amount in \(Self.currencies.joined(separator: ", ")) (got \(request.amount.currency.prefix(8)))")
        }
        guard let back = request.returnUrl, let backURL = URL(string: back), backURL.scheme == "https" || backURL.scheme == "http", backURL.host != nil else {
            throw AdapterError.invalidRequest("returnUrl (http or https) is required: Worldline's 3-D Secure page sends the payer back to it")
        }
        let encrypted: String?
        let token: String?
        switch (request.instrument?["encryptedCustomerInput"], request.instrument?["token"]) {
        case (.string(let jwe)?, nil):
            if let why = Self.jweProblem(jwe) { throw AdapterError.invalidRequest("instrument.encryptedCustomerInput \(why)") }
            (encrypted, token) = (jwe, nil)
        case (nil, .string(let stored)?):
            guard stored.range(of: "^[A-Za-z0-9_-]{1,64}$", options: .regularExpression) != nil else {
                throw AdapterError.invalidRequest("instrument.token must be a Worldline token: 1 to 64 letters, digits, - or _")
            }
            (encrypted, token) = (nil, stored)
        default:
            throw AdapterError.invalidRequest("instrument must carry exactly one of encryptedCustomerInput (the JWE a Worldline client SDK made) or token")
        }
        let body = WorldlineWire.CreatePayment(
            order: .init(amountOfMoney: .init(amount: request.amount.value, currencyCode: request.amount.currency),
                         references: .init(merchantReference: request.paymentId)),
            encryptedCustomerInput: encrypted,
            cardPaymentMethodSpecificInput: .init(authorizationMode: request.capture == .automatic ? "SALE" : "PRE_AUTHORIZATION",
                                                  token: token, paymentProductId: token == nil ? nil : product,
                                                  threeDSecure: .init(redirectionData: .init(returnUrl: back))),
            feedbacks: webhookURL.map { .init(webhooksUrls: [$0]) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let create = WorldlineLostCreates.Create(url: client.url("/payments"), body: try encoder.encode(body), key: request.idempotencyKey,
                                                 until: host.now.addingTimeInterval(Self.clientSessionLife))
        // Held before it is sent: if the host stops waiting first, verify still has it to replay.
        note(lostCreates.hold(create, for: request.paymentId, now: host.now))
        return try await self.create(create, paymentId: request.paymentId, replay: false)
    }

    /// Sends (or, from verify, replays) a create and reads its answer.
    ///
    /// A first try's refusal (400, 401, 403, 404) proves nothing was made. A
    /// replay's does not: its first try may have charged and the refusal be
    /// about something since changed (a rotated key, a moved `base_url`, an
    /// input now used up), so on a replay only a payment (2xx) or a decline
    /// carrying the rejected payment (402) is final. Anything else keeps
    /// the outcome unknown, and the create held for the next verify.
    func create(_ create: WorldlineLostCreates.Create, paymentId: String, replay: Bool) async throws -> AdapterResult {
        let answer: WorldlineAnswer
        do {
            answer = try await client.send("POST", create.url, body: create.body, idempotenceKey: create.key)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's payment create got no answer (\(error.message)); verify replays it under the same idempotence key")
        }
        if answer.status == 402, let rejected = answer.decode(WorldlineWire.ErrorAnswer.self)?.paymentResult?.payment, Self.isPaymentID(rejected.id) {
            note(lostCreates.answered(paymentId, with: rejected.id, until: create.until, now: host.now))
            var result = WorldlineStatus.result(rejected)
            if result.problem == nil || result.status != .failed {
                let error = answer.error
                result = AdapterResult(status: .failed, providerReference: rejected.id,
                                       problem: WorldlineStatus.problem(code: error?.errorCode, id: error?.id), providerStatus: rejected.status)
            }
            return result
        }
        if answer.ok {
            guard let created = answer.decode(WorldlineWire.CreateAnswer.self), let payment = created.payment, Self.isPaymentID(payment.id) else {
                throw AdapterError.outcomeUnknown("Worldline created a payment but its answer cannot be read (\(answer.summary))")
            }
            note(lostCreates.answered(paymentId, with: payment.id, until: create.until, now: host.now))
            var result = WorldlineStatus.result(payment)
            if let action = created.merchantAction, action.actionType == "REDIRECT", let url = action.redirectData?.redirectURL,
               url.hasPrefix("https://") || url.hasPrefix("http://") {
                result.status = .pending
                result.action = PaymentAction(type: .threeDS, url: url, method: "GET")
            }
            return result
        }
        guard !replay, [400, 401, 402, 403, 404].contains(answer.status) else {
            // 5xx, 429, 409 (1409: the first try still runs), anything unlisted, and every refusal of a replay.
            throw AdapterError.outcomeUnknown("Worldline's payment create answered \(answer.summary); verify replays it under the same idempotence key")
        }
        // A first try refused: no payment was made, and the create is not held.
        note(lostCreates.answered(paymentId, with: nil, until: create.until, now: host.now))
        let error = answer.error
        if answer.status == 402 {
            return AdapterResult(status: .failed, problem: WorldlineStatus.problem(code: error?.errorCode, id: error?.id), providerStatus: "REJECTED")
        }
        if answer.status == 400, let property = error?.propertyName?.lowercased(), Self.isCardInput(property) {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .invalidCardDetails, message: "Worldline refused the card input: \(answer.summary); nothing was charged", retryable: true,
                safeToRetryElsewhere: false, providerCode: error?.errorCode ?? error?.id, field: "instrument"))
        }
        return AdapterResult(status: .failed, problem: AdapterProblem(
            code: .providerError, message: "Worldline refused the payment create: \(answer.summary); nothing was charged", retryable: false,
            safeToRetryElsewhere: true, providerCode: error?.errorCode ?? "HTTP \(answer.status)"))
    }

    /// Whether a 400's `propertyName` is the payer's card input (not the
    /// merchant's request: a return URL or an authorization mode is not).
    static func isCardInput(_ property: String) -> Bool {
        property.hasPrefix("encryptedcustomerinput") || property == "cardpaymentmethodspecificinput.token"
            || property.hasPrefix("cardpaymentmethodspecificinput.card")
    }

    /// Records what became of `paymentId`'s create, warning when a bound
    /// dropped another's.
    func note(_ dropped: String?) {
        if let dropped {
            host.log(.warning, "worldline: too many creates remembered for verify; \(dropped)'s was dropped, and its webhook must settle it")
        }
    }

    /// Why `jwe` is not a compact JWE of `RSA-OAEP` / `A256CBC-HS512`, or nil.
    /// The adapter cannot open it (only Worldline can); it checks the shape.
    static func jweProblem(_ jwe: String) -> String? {
        guard jwe.utf8.count <= 16_384 else { return "is longer than 16 KiB" }
        let parts = jwe.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } }) else {
            return "must be a compact JWE: five base64url parts separated by dots"
        }
        var header = String(parts[0]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while header.count % 4 != 0 { header += "=" }
        guard let data = Data(base64Encoded: header),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return "has a header that is not JSON" }
        guard object["alg"] as? String == "RSA-OAEP", object["enc"] as? String == "A256CBC-HS512" else {
            return "must use alg RSA-OAEP and enc A256CBC-HS512"
        }
        guard let kid = object["kid"] as? String, !kid.isEmpty else { return "has no kid (the key id of the client session's public key)" }
        return nil
    }
}
