import Foundation
import GatewayAdapterSDK

/// continue and verify: read the order, and finish what Tamara requires of
/// the merchant once the payer approved.
extension TamaraAdapter {
    /// The payer came back. Their parameters are only a hint: the order is
    /// read from Tamara. A payer who cancelled on Tamara's page
    /// (`paymentStatus=canceled`) leaves the order `new`; its checkout is then
    /// voided (which can only stop a payment, never make one), so the attempt
    /// ends `cancelled` instead of waiting 30 minutes for the order to expire.
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        let reference = try TamaraReference(request.providerReference)
        var order = try await fetch(reference.orderId)
        if order.status == "new", request.returnParams?["paymentStatus"] == "canceled" {
            let path = "/checkout/\(ProviderHTTPClient.pathSegment(reference.checkoutId))/void?order_id=\(ProviderHTTPClient.pathSegment(reference.orderId))"
            do {
                let answer = try await client.send("POST", path)
                if answer.ok, answer.decode(TamaraWire.VoidAnswer.self)?.orderWasVoided == true {
                    return AdapterResult(status: .cancelled, providerReference: reference.text, problem: AdapterProblem(
                        code: .userCancelled, message: "the payer cancelled on Tamara's checkout page; the checkout was voided", retryable: true),
                        providerStatus: "canceled")
                }
            } catch is HTTPEgressError {
                // Voiding stops a payment only; if it was lost, the order is read again below.
            }
            order = try await fetch(reference.orderId)
        }
        return try await settle(order, reference)
    }

    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        guard let text = request.providerReference else {
            return try await settleLostCheckout(request.paymentId, capture: .manual, why: "the attempt has no Tamara order") { detail in
                throw AdapterError.outcomeUnknown("Tamara: the attempt has no order, and \(detail)")
            }
        }
        let reference = try TamaraReference(text)
        return try await settle(try await fetch(reference.orderId), reference)
    }

    /// What Tamara holds under a payment id, the checkout's `order_reference_id`.
    enum OrderUnderReference {
        /// None (404).
        case none
        /// An order, and its id.
        case order(TamaraWire.Order, String)
        /// The read got no usable answer (why).
        case unreadable(String)
    }

    /// `GET /merchants/orders/reference-id/{payment id}`.
    func order(underReference paymentId: String) async -> OrderUnderReference {
        let answer: TamaraAnswer
        do {
            answer = try await client.send("GET", "/merchants/orders/reference-id/\(ProviderHTTPClient.pathSegment(paymentId))")
        } catch let error as HTTPEgressError {
            return .unreadable("reading an order under reference \(paymentId.prefix(64)) got no answer: \(error.message)")
        } catch {
            return .unreadable("reading an order under reference \(paymentId.prefix(64)) failed: \(error)")
        }
        if answer.status == 404 { return .none }
        guard answer.ok, let order = answer.decode(TamaraWire.Order.self), order.status != nil, order.currency != nil,
              let orderId = order.orderId, TamaraReference.isIdentifier(orderId), order.orderReferenceId == paymentId else {
            return .unreadable("reading an order under reference \(paymentId.prefix(64)) answered \(answer.summary)")
        }
        return .order(order, orderId)
    }

    /// A checkout whose answer was lost (or an attempt that has no order),
    /// settled from the order under its reference (``order(underReference:)``).
    /// None, or one still `new` (or declined, expired, canceled): its
    /// checkout never reached the payer, who therefore paid nothing; the
    /// attempt fails, safe to retry elsewhere. An order past that (the payer
    /// approved somehow) is settled as any order, with `capture` (verify does
    /// not know the attempt's: manual, never captured unasked). `unreadable`
    /// answers a read that said nothing usable.
    func settleLostCheckout(_ paymentId: String, capture: CaptureMode, why: String,
                            unreadable: (String) throws -> AdapterResult) async throws -> AdapterResult {
        switch await order(underReference: paymentId) {
        case .unreadable(let detail):
            return try unreadable(detail)
        case .none:
            return Self.notCreated("\(why); Tamara holds no order under reference \(paymentId.prefix(64))")
        case .order(let order, let orderId):
            let status = order.status ?? ""
            if ["new", "declined", "expired", "canceled"].contains(status) {
                return Self.notCreated("\(why); Tamara made order \(orderId) (\(status)), whose checkout never reached the payer")
            }
            host.log(.warning, "Tamara order \(orderId) under reference \(paymentId.prefix(64)) is \(status) though its checkout answer was lost: settling it")
            return try await settle(order, TamaraReference(capture: capture, orderId: orderId, checkoutId: TamaraReference.foundByReference))
        }
    }

    /// `GET /orders/{id}`; a lost or unusable answer leaves the outcome unknown.
    func fetch(_ orderId: String) async throws -> TamaraWire.Order {
        try Self.order(from: try await query(orderId), orderId)
    }

    /// The order query's answer, whatever its status; no answer is an unknown outcome.
    func query(_ orderId: String) async throws -> TamaraAnswer {
        do {
            return try await client.send("GET", "/orders/\(ProviderHTTPClient.pathSegment(orderId))")
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Tamara's order query got no answer: \(error.message)")
        }
    }

    static func order(from answer: TamaraAnswer, _ orderId: String) throws -> TamaraWire.Order {
        guard answer.ok, let order = answer.decode(TamaraWire.Order.self), order.status != nil, order.currency != nil else {
            throw AdapterError.outcomeUnknown("Tamara could not report order \(orderId.prefix(64)): \(answer.summary)")
        }
        return order
    }

    /// Where the order stands, after authorising an `approved` order and, for
    /// automatic capture, capturing an authorised one in full.
    ///
    /// A refused authorise or capture (another call got there first: the
    /// payer's return and the notification race) is followed by a fresh read,
    /// so the order is settled once whoever wins. A full capture cannot be
    /// taken twice: Tamara refuses a capture beyond what is left.
    func settle(_ order: TamaraWire.Order, _ reference: TamaraReference, depth: Int = 0) async throws -> AdapterResult {
        let status = order.status ?? ""
        let currency = order.currency ?? ""
        switch status {
        case "approved" where depth < 3:
            let answer = try await post("/orders/\(ProviderHTTPClient.pathSegment(reference.orderId))/authorise", nil, what: "authorise")
            if !answer.ok { host.log(.info, "Tamara refused to authorise order \(reference.orderId): \(answer.summary); reading it again") }
            return try await settle(try await fetch(reference.orderId), reference, depth: depth + 1)
        case "authorised", "updated":
            guard reference.capture == .automatic, depth < 3 else {
                return result(.authorized, reference, Money(value: order.value(order.totalAmount) - order.value(order.canceledAmount), currency: currency), status)
            }
            let capture = TamaraWire.Capture(
                orderId: reference.orderId, totalAmount: try TamaraMoney(Money(value: order.capturable, currency: currency)),
                shippingInfo: TamaraWire.ShippingInfo(shippedAt: Self.timestamp(host.now), shippingCompany: shippingCompany))
            let answer = try await post("/payments/capture", capture, what: "capture")
            if !answer.ok { host.log(.info, "Tamara refused to capture order \(reference.orderId): \(answer.summary); reading it again") }
            return try await settle(try await fetch(reference.orderId), reference, depth: depth + 1)
        default:
            return Self.classify(order, reference)
        }
    }

    /// A POST whose effect may be lost: no answer or a 5xx leaves it unknown.
    func post(_ path: String, _ body: (any Encodable & Sendable)?, what: String) async throws -> TamaraAnswer {
        let answer = try await client.exchange("POST", path, body.map { .json($0) } ?? .none, what: what)
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("Tamara's \(what) answered \(answer.summary)") }
        return answer
    }

    /// Every order status Tamara documents, as a result.
    static func classify(_ order: TamaraWire.Order, _ reference: TamaraReference?) -> AdapterResult {
        let status = order.status ?? ""
        let currency = order.currency ?? ""
        let captured = Money(value: order.value(order.capturedAmount), currency: currency)
        let said = "Tamara order \(order.orderId?.prefix(64) ?? "?") is \(status)"
        func failed(_ result: PaymentStatus, _ code: ProblemCode, retryable: Bool, elsewhere: Bool) -> AdapterResult {
            AdapterResult(status: result, providerReference: reference?.text, problem: AdapterProblem(
                code: code, message: said, retryable: retryable, safeToRetryElsewhere: elsewhere, providerCode: status), providerStatus: status)
        }
        switch status {
        case "new", "approved":
            // new: the payer has not decided yet; approved: authorising it was lost or refused.
            return AdapterResult(status: .pending, providerReference: reference?.text, providerStatus: status)
        case "authorised", "updated":
            return AdapterResult(status: .authorized, providerReference: reference?.text,
                                 amount: Money(value: order.value(order.totalAmount) - order.value(order.canceledAmount), currency: currency),
                                 providerStatus: status)
        case "partially_captured":
            return AdapterResult(status: reference?.capture == .automatic ? .succeeded : .authorized, providerReference: reference?.text,
                                 amount: captured, providerStatus: status)
        case "fully_captured", "partially_refunded", "fully_refunded":
            return AdapterResult(status: .succeeded, providerReference: reference?.text, amount: captured, providerStatus: status)
        case "declined":
            // Tamara's credit decision: the payer was refused, nothing was charged.
            return failed(.failed, .bnplDeclined, retryable: false, elsewhere: true)
        case "expired":
            // Never approved within its lifetime: nothing was charged.
            return failed(.failed, .expired, retryable: false, elsewhere: true)
        case "canceled":
            return order.authorizedAmount == nil
                ? failed(.cancelled, .userCancelled, retryable: true, elsewhere: false)
                : failed(.cancelled, .voided, retryable: false, elsewhere: false)
        default:
            return AdapterResult(status: .pending, providerReference: reference?.text, problem: AdapterProblem(
                code: .providerError, message: "\(said), a status this adapter does not know", retryable: true), providerStatus: status)
        }
    }

    func result(_ status: PaymentStatus, _ reference: TamaraReference, _ amount: Money, _ providerStatus: String) -> AdapterResult {
        AdapterResult(status: status, providerReference: reference.text, amount: amount, providerStatus: providerStatus)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
