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
        let lost = LostCreate(url: client.url("/payments"), body: try encoder.encode(body), key: request.idempotencyKey,
                              until: host.now.addingTimeInterval(Self.clientSessionLife))
        return try await create(lost, paymentId: request.paymentId)
    }

    /// Sends (or replays) a create and reads its answer. Without a usable
    /// answer the create is kept for verify and the outcome is unknown.
    func create(_ create: LostCreate, paymentId: String) async throws -> AdapterResult {
        let answer: WorldlineAnswer
        do {
            answer = try await client.send("POST", create.url, body: create.body, idempotenceKey: create.key)
        } catch let error as HTTPEgressError {
            keep(create, for: paymentId)
            throw AdapterError.outcomeUnknown("Worldline's payment create got no answer (\(error.message)); verify replays it under the same idempotence key")
        }
        if answer.status >= 500 || answer.status == 409 || answer.status == 429 {
            // 409 is a replay while the first try still runs (1409).
            keep(create, for: paymentId)
            throw AdapterError.outcomeUnknown("Worldline's payment create answered \(answer.summary); verify replays it under the same idempotence key")
        }
        if answer.status == 402, let rejected = answer.decode(WorldlineWire.ErrorAnswer.self)?.paymentResult?.payment, Self.isPaymentID(rejected.id) {
            forget(paymentId)
            var result = WorldlineStatus.result(rejected)
            if result.problem == nil || result.status != .failed {
                let error = answer.error
                result = AdapterResult(status: .failed, providerReference: rejected.id,
                                       problem: WorldlineStatus.problem(code: error?.errorCode, id: error?.id), providerStatus: rejected.status)
            }
            return result
        }
        guard answer.ok else {
            forget(paymentId)
            let error = answer.error
            if answer.status == 402 {
                // A decline without the rejected payment: still a decline, nothing charged.
                return AdapterResult(status: .failed, problem: WorldlineStatus.problem(code: error?.errorCode, id: error?.id), providerStatus: "REJECTED")
            }
            if answer.status == 400, let property = error?.propertyName?.lowercased(),
               property.contains("encryptedcustomerinput") || property.contains("card") || property.contains("token") {
                return AdapterResult(status: .failed, problem: AdapterProblem(
                    code: "invalid_card_details", message: "Worldline refused the card input: \(answer.summary); nothing was charged", retryable: true,
                    safeToRetryElsewhere: false, providerCode: error?.errorCode ?? error?.id, field: "instrument"))
            }
            // Refused before any payment was made (input, credentials, merchant): nothing was charged.
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: "provider_error", message: "Worldline refused the payment create: \(answer.summary); nothing was charged", retryable: false,
                safeToRetryElsewhere: answer.status == 400 || answer.status == 401 || answer.status == 403 || answer.status == 404,
                providerCode: error?.errorCode ?? "HTTP \(answer.status)"))
        }
        guard let created = answer.decode(WorldlineWire.CreateAnswer.self), let payment = created.payment, Self.isPaymentID(payment.id) else {
            keep(create, for: paymentId)
            throw AdapterError.outcomeUnknown("Worldline created a payment but its answer cannot be read (\(answer.summary))")
        }
        forget(paymentId)
        var result = WorldlineStatus.result(payment)
        if let action = created.merchantAction, action.actionType == "REDIRECT", let url = action.redirectData?.redirectURL,
           url.hasPrefix("https://") || url.hasPrefix("http://") {
            result.status = .pending
            result.action = PaymentAction(type: .threeDS, url: url, method: "GET")
        }
        return result
    }

    func keep(_ create: LostCreate, for paymentId: String) {
        let now = host.now
        lostCreates.withLock { creates in
            creates = creates.filter { $0.value.until > now }
            creates[paymentId] = create
        }
    }

    func forget(_ paymentId: String) {
        _ = lostCreates.withLock { $0.removeValue(forKey: paymentId) }
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
