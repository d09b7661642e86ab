import Foundation
import Hummingbird
import NIOCore

/// Worldline Direct's server API, as the merchant's server calls it, each
/// request signed (``WorldlineAuthentication``), each POST idempotent under
/// `X-GCS-Idempotence-Key` (``WorldlineIdempotence``):
///
/// - `POST /v2/{merchantId}/sessions`: a client session for a payer's device
///   (``WorldlineClientAPI``), alive two hours;
/// - `POST /v2/{merchantId}/payments`: a card payment from
///   `encryptedCustomerInput`, a stored card's token or a plain card
///   (``WorldlineServerAPI/create(_:_:)``);
/// - `GET /v2/{merchantId}/payments/{paymentId}` and `…/details` (the same,
///   with its captures and refunds as `Operations`), `…/captures` and
///   `…/refunds` (each as its POST answered it);
/// - `POST …/{paymentId}/capture`, `…/cancel` (all, or part with
///   `amountOfMoney`) and `…/refund`.
///
/// Each status change is posted, signed, to the loopback URLs the payment's
/// `feedbacks.webhooksUrls` named (``WorldlineSimulator/deliverWebhooks(for:)``).
///
/// A merchant other than the sandbox's is refused with 403 (errorCode
/// `9007`, ours), an unknown payment with 404 `UNKNOWN_PAYMENT_ID` (ours),
/// an operation the payment's status does not allow with 409
/// `INVALID_PAYMENT_STATUS` (ours).
struct WorldlineServerAPI: Sendable {
    let simulator: WorldlineSimulator
    let base: @Sendable () -> String

    typealias Work = (_ merchant: String, _ body: [String: Any]) throws -> WorldlineAnswer

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("v2/:merchantId/sessions") { request, context in
            try await api.signed(request, context) { merchant, body in try api.createSession(merchant, body) }
        }
        routes.post("v2/:merchantId/payments") { request, context in
            try await api.signed(request, context) { merchant, body in try api.create(merchant, body) }
        }
        routes.get("v2/:merchantId/payments/:paymentId") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, _ in try api.read(merchant, id, details: false) }
        }
        routes.get("v2/:merchantId/payments/:paymentId/details") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, _ in try api.read(merchant, id, details: true) }
        }
        routes.get("v2/:merchantId/payments/:paymentId/captures") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, _ in try api.operations(merchant, id, .capture) }
        }
        routes.get("v2/:merchantId/payments/:paymentId/refunds") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, _ in try api.operations(merchant, id, .refund) }
        }
        routes.post("v2/:merchantId/payments/:paymentId/capture") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, body in try api.capture(merchant, id, body) }
        }
        routes.post("v2/:merchantId/payments/:paymentId/cancel") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, body in try api.cancel(merchant, id, body) }
        }
        routes.post("v2/:merchantId/payments/:paymentId/refund") { request, context in
            let id = context.parameters.get("paymentId") ?? ""
            return try await api.signed(request, context) { merchant, body in try api.refund(merchant, id, body) }
        }
    }

    /// The signature (401), the merchant (403), the body, then `work`, under
    /// the idempotence key for a POST. A refusal `work` throws is its answer.
    func signed(_ request: Request, _ context: BasicRequestContext, _ work: @escaping Work) async throws -> Response {
        guard let signed = WorldlineAuthentication.verify(request, keyID: WorldlineSimulator.apiKeyID, secret: WorldlineSimulator.apiSecret) else {
            return WorldlineWire.Refusal.unauthorized.response
        }
        simulator.state.withLock { $0.lastSignedRequest = signed }
        let merchant = context.parameters.get("merchantId") ?? ""
        guard merchant == WorldlineSimulator.merchantID else { return WorldlineWire.Refusal.forbidden.response }
        let buffer = try await request.body.collect(upTo: 256 * 1024)
        let run: () async throws -> WorldlineAnswer = {
            do {
                return try work(merchant, try WorldlineWire.object(buffer))
            } catch let refusal as WorldlineWire.Refusal {
                return refusal.answer
            }
        }
        guard request.method == .post else { return try await run().response }
        return try await simulator.idempotent(request, merchant: merchant, body: Data(buffer: buffer), run)
    }

    // MARK: Sessions

    /// `{"tokens": [...]}` (optional): the tokens this merchant does not have come back as `invalidTokens`.
    func createSession(_ merchant: String, _ body: [String: Any]) throws -> WorldlineAnswer {
        let tokens: [String]
        switch body["tokens"] {
        case .none: tokens = []
        case .some(let list as [String]): tokens = list
        default: throw WorldlineWire.Refusal.invalid("tokens", "tokens must be a list of token ids")
        }
        let session = WorldlineClientSession(id: WorldlineSimulator.randomHex(16),
                                             customerId: String(Int.random(in: 1000...9999)) + "-" + WorldlineSimulator.randomHex(16),
                                             merchantID: merchant, expiresAt: Date().addingTimeInterval(WorldlineSimulator.sessionLifetime))
        simulator.state.withLock { $0.add(session) }
        return WorldlineAnswer(201, [
            "clientSessionId": session.id, "customerId": session.customerId,
            "clientApiUrl": base() + "/client", "assetUrl": base() + "/assets",
            "invalidTokens": tokens.filter { WorldlineCards.tokens[$0] == nil },
        ])
    }

    // MARK: Payments

    func lookup(_ merchant: String, _ id: String) throws -> WorldlinePayment {
        guard let payment = simulator.state.withLock({ $0.payments[id] }), payment.merchantID == merchant else {
            throw WorldlineWire.Refusal.unknownPayment
        }
        return payment
    }

    func read(_ merchant: String, _ id: String, details: Bool) throws -> WorldlineAnswer {
        let payment = try lookup(merchant, id)
        return WorldlineAnswer(200, details ? WorldlineWire.details(payment) : WorldlineWire.payment(payment))
    }

    /// `GET …/captures` (`{"captures": [...]}`) or `…/refunds` (`{"refunds": [...]}`),
    /// oldest first, each as its POST answered it.
    func operations(_ merchant: String, _ id: String, _ kind: WorldlinePayment.OperationKind) throws -> WorldlineAnswer {
        let payment = try lookup(merchant, id)
        let chosen = payment.operations.filter { $0.kind == kind }
        return kind == .capture
            ? WorldlineAnswer(200, ["captures": chosen.map { WorldlineWire.capture(payment, $0) }])
            : WorldlineAnswer(200, ["refunds": chosen.map { WorldlineWire.refund(payment, $0) }])
    }

    /// `{"amount"?, "isFinal"?}`: takes `amount` (all that is left when
    /// absent) of an authorisation; one charge. The payment stays
    /// `PENDING_CAPTURE` until all is captured or a capture is final.
    func capture(_ merchant: String, _ id: String, _ body: [String: Any]) throws -> WorldlineAnswer {
        let requested = body["amount"] == nil ? nil : WorldlineWire.integer(body["amount"])
        if body["amount"] != nil, (requested ?? 0) <= 0 {
            throw WorldlineWire.Refusal.invalid("amount", "The amount must be a positive integer in minor units")
        }
        let isFinal = body["isFinal"] as? Bool ?? false
        _ = try lookup(merchant, id)
        let result: Result<(WorldlinePayment, WorldlinePayment.Operation), WorldlineWire.Refusal> = simulator.state.withLock { state in
            guard var payment = state.payments[id] else { return .failure(.unknownPayment) }
            guard payment.capturable > 0 else { return .failure(.invalidStatus(payment.status, "captured")) }
            let amount = requested ?? payment.capturable
            guard amount <= payment.capturable else {
                return .failure(WorldlineWire.Refusal(400, "1103", "CAPTURE_AMOUNT_EXCEEDS_AUTHORIZED_AMOUNT",
                                                      "At most \(payment.capturable) is left to capture", property: "amount"))
            }
            let operation = payment.addOperation(.capture, amount: amount)
            state.charges += 1
            if isFinal || payment.captured == payment.amount {
                payment.captureClosed = true
                payment.status = "CAPTURED"
                payment.statusCode = 9
            }
            state.payments[id] = payment
            return .success((payment, operation))
        }
        let (payment, operation) = try result.get()
        simulator.deliverWebhooks(for: id)
        return WorldlineAnswer(201, WorldlineWire.capture(payment, operation))
    }

    /// Cancels a payment waiting for 3-D Secure or for captures: `CANCELLED`
    /// (statusCode 6); when part was captured already, the rest is released
    /// and the payment is `CAPTURED`. With `amountOfMoney` (an authorisation
    /// only), that much of what is left to capture is released and the rest
    /// stays capturable, unless `isFinal` or nothing is left.
    func cancel(_ merchant: String, _ id: String, _ body: [String: Any]) throws -> WorldlineAnswer {
        let current = try lookup(merchant, id)
        let requested: Int64?
        if let money = body["amountOfMoney"] {
            guard let money = money as? [String: Any], let amount = WorldlineWire.integer(money["amount"]), amount > 0 else {
                throw WorldlineWire.Refusal.invalid("amountOfMoney.amount", "The amount must be a positive integer in minor units")
            }
            guard money["currencyCode"] as? String == current.currency else {
                throw WorldlineWire.Refusal.invalid("amountOfMoney.currencyCode", "The currency must be the payment's, \(current.currency)")
            }
            requested = amount
        } else {
            requested = nil
        }
        let isFinal = body["isFinal"] as? Bool ?? false
        let result: Result<WorldlinePayment, WorldlineWire.Refusal> = simulator.state.withLock { state in
            guard var payment = state.payments[id] else { return .failure(.unknownPayment) }
            guard payment.status == "REDIRECTED" || payment.status == "PENDING_CAPTURE" else {
                return .failure(.invalidStatus(payment.status, "cancelled"))
            }
            if let requested {
                guard payment.status == "PENDING_CAPTURE" else { return .failure(.invalidStatus(payment.status, "partly cancelled")) }
                guard requested <= payment.capturable else {
                    return .failure(WorldlineWire.Refusal(400, "1105", "CANCEL_AMOUNT_EXCEEDS_AUTHORIZED_AMOUNT",
                                                          "At most \(payment.capturable) is left to cancel", property: "amountOfMoney.amount"))
                }
                payment.cancelled += requested
            }
            if requested == nil || isFinal || payment.capturable == 0 {
                state.closeChallenge(of: id)
                payment.challenge = nil
                payment.captureClosed = true
                if requested == nil { payment.cancelled = payment.amount - payment.captured }
                (payment.status, payment.statusCode) = payment.captured > 0 ? ("CAPTURED", 9) : ("CANCELLED", 6)
            }
            payment.updated = Date()
            state.payments[id] = payment
            return .success(payment)
        }
        let payment = try result.get()
        simulator.deliverWebhooks(for: id)
        return WorldlineAnswer(200, ["payment": WorldlineWire.payment(payment)])
    }

    /// `{"amountOfMoney"?: {amount, currencyCode}}`: gives back part or all
    /// (when absent) of what was captured; `REFUNDED` (8) once all of it is.
    func refund(_ merchant: String, _ id: String, _ body: [String: Any]) throws -> WorldlineAnswer {
        let current = try lookup(merchant, id)
        let money = body["amountOfMoney"] as? [String: Any]
        let requested = money.flatMap { WorldlineWire.integer($0["amount"]) }
        if body["amountOfMoney"] != nil {
            guard let money, let amount = requested, amount > 0 else {
                throw WorldlineWire.Refusal.invalid("amountOfMoney.amount", "The amount must be a positive integer in minor units")
            }
            guard money["currencyCode"] as? String == current.currency else {
                throw WorldlineWire.Refusal.invalid("amountOfMoney.currencyCode", "The currency must be the payment's, \(current.currency)")
            }
        }
        let result: Result<(WorldlinePayment, WorldlinePayment.Operation), WorldlineWire.Refusal> = simulator.state.withLock { state in
            guard var payment = state.payments[id] else { return .failure(.unknownPayment) }
            guard payment.refundable > 0 else { return .failure(.invalidStatus(payment.status, "refunded")) }
            let amount = requested ?? payment.refundable
            guard amount <= payment.refundable else {
                return .failure(WorldlineWire.Refusal(400, "1104", "REFUND_AMOUNT_EXCEEDS_CAPTURED_AMOUNT",
                                                      "At most \(payment.refundable) is left to refund", property: "amountOfMoney.amount"))
            }
            let operation = payment.addOperation(.refund, amount: amount)
            if payment.refundable == 0, payment.captureClosed {
                payment.status = "REFUNDED"
                payment.statusCode = 8
            }
            state.payments[id] = payment
            return .success((payment, operation))
        }
        let (payment, operation) = try result.get()
        simulator.deliverWebhooks(for: id)
        return WorldlineAnswer(201, WorldlineWire.refund(payment, operation))
    }
}
