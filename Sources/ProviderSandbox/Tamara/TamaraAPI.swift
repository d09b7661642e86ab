import Foundation
import GatewayPayloads
import Hummingbird

/// The order half of the simulated Tamara API: creating the checkout,
/// reading, authorising and cancelling an order, and voiding an unpaid
/// checkout. Capture and refund are in ``TamaraPayments``.
struct TamaraAPI: Sendable {
    let simulator: TamaraSimulator
    let sandbox: SandboxContext

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("checkout") { request, _ -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            do { return api.checkout(try await TamaraWire.decode(TamaraWire.CheckoutRequest.self, request)) }
            catch let invalid as TamaraWire.Invalid { return TamaraWire.invalid(invalid) }
        }
        routes.get("orders/:orderId") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            return api.details(context.parameters.get("orderId") ?? "")
        }
        // The merchant API's spelling of the same read (the official SDK's getOrder).
        routes.get("merchants/orders/:orderId") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            return api.details(context.parameters.get("orderId") ?? "")
        }
        // The one way to find an order whose checkout answer was lost.
        routes.get("merchants/orders/reference-id/:referenceId") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            return api.details(byReference: context.parameters.get("referenceId") ?? "")
        }
        routes.post("orders/:orderId/authorise") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            return api.authorise(context.parameters.get("orderId") ?? "")
        }
        routes.post("orders/:orderId/cancel") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            do { return api.cancel(context.parameters.get("orderId") ?? "", try await TamaraWire.decode(TamaraWire.CancelRequest.self, request)) }
            catch let invalid as TamaraWire.Invalid { return TamaraWire.invalid(invalid) }
        }
        routes.post("checkout/:checkoutId/void") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            return api.void(context.parameters.get("checkoutId") ?? "", orderId: request.uri.queryParameters.get("order_id"))
        }
    }

    /// `POST /checkout`.
    func checkout(_ body: TamaraWire.CheckoutRequest) -> Response {
        do {
            let order = try Self.order(from: body)
            simulator.state.withLock { $0.add(order) }
            return TamaraWire.response(.ok, [
                "order_id": order.orderId, "checkout_id": order.checkoutId, "status": order.status,
                "checkout_url": sandbox.base(of: simulator) + "/checkout/" + order.checkoutId,
            ])
        } catch {
            return TamaraWire.invalid(error)
        }
    }

    /// `GET /orders/{id}`.
    func details(_ orderId: String) -> Response {
        guard let order = simulator.state.withLock({ $0.order(orderId) }) else { return TamaraWire.notFound("Order") }
        return TamaraWire.response(.ok, Self.document(order))
    }

    /// `GET /merchants/orders/reference-id/{order_reference_id}`: the latest
    /// order made under the merchant's reference.
    func details(byReference referenceId: String) -> Response {
        guard let order = simulator.state.withLock({ state in state.byReference[referenceId].flatMap { state.order($0) } }) else {
            return TamaraWire.notFound("Order")
        }
        return TamaraWire.response(.ok, Self.document(order))
    }

    static func document(_ order: TamaraOrder) -> [String: Any] {
        let currency = order.total.currency
        var document: [String: Any] = [
            "order_id": order.orderId, "order_reference_id": order.referenceId, "order_number": order.orderNumber,
            "description": order.description, "status": order.status, "payment_type": order.paymentType,
            "country_code": order.countryCode, "created_at": SimulatorJSON.timestamp(order.createdAt),
            "total_amount": TamaraWire.amount(order.total),
            "captured_amount": TamaraWire.amount(Money(value: order.captured, currency: currency)),
            "refunded_amount": TamaraWire.amount(Money(value: order.refunded, currency: currency)),
            "canceled_amount": TamaraWire.amount(Money(value: order.canceled, currency: currency)),
            "consumer": ["first_name": order.consumer.firstName ?? "", "last_name": order.consumer.lastName ?? "",
                         "phone_number": order.consumer.phoneNumber ?? "", "email": order.consumer.email ?? ""],
        ]
        if let instalments = order.instalments { document["instalments"] = instalments }
        if let data = order.additionalData { document["additional_data"] = data }
        if order.wasAuthorised { document["authorized_amount"] = TamaraWire.amount(order.total) }
        return document
    }

    /// `POST /orders/{id}/authorise`: only an `approved` order.
    func authorise(_ orderId: String) -> Response {
        let outcome: Result<TamaraOrder, TamaraRefusal>? = simulator.state.withLock { state -> Result<TamaraOrder, TamaraRefusal>? in
            guard var order = state.order(orderId) else { return nil }
            guard order.status == "approved" else {
                return .failure(TamaraRefusal(message: "Order status is \(order.status); only an approved order can be authorised",
                                              code: "order_status_not_allowed_to_authorise"))
            }
            order.status = "authorised"
            order.wasAuthorised = true
            order.events.append("order_authorised")
            state.orders[orderId] = order
            return .success(order)
        }
        switch outcome {
        case nil: return TamaraWire.notFound("Order")
        case .failure(let refusal): return refusal.response
        case .success(let order):
            return TamaraWire.response(.ok, [
                "order_id": order.orderId, "status": "authorised", "payment_type": order.paymentType,
                "order_expiry_time": SimulatorJSON.timestamp(Date().addingTimeInterval(21 * 86_400)),
                "auto_captured": false, "authorized_amount": TamaraWire.amount(order.total),
            ])
        }
    }

    /// `POST /orders/{id}/cancel`: releases what is authorised and not
    /// captured (all of it: `canceled`; part: `updated`).
    func cancel(_ orderId: String, _ body: TamaraWire.CancelRequest) -> Response {
        let outcome: Result<(TamaraOrder, Money), TamaraRefusal>? = simulator.state.withLock { state -> Result<(TamaraOrder, Money), TamaraRefusal>? in
            guard var order = state.order(orderId) else { return nil }
            let amount: Money
            do throws(TamaraWire.Invalid) { amount = try TamaraWire.money(body.totalAmount, field: "total_amount") }
            catch { return .failure(TamaraRefusal(message: error.message, code: error.code)) }
            guard ["authorised", "updated"].contains(order.status), order.captured == 0 else {
                return .failure(TamaraRefusal(message: "Order status is \(order.status); only an authorised, uncaptured order can be canceled",
                                              code: "order_status_not_allowed_to_cancel"))
            }
            guard amount.currency == order.total.currency, amount.value <= order.capturable else {
                return .failure(TamaraRefusal(message: "Cancel amount exceeds the \(order.capturable) minor units left", code: "invalid_cancel_amount"))
            }
            order.canceled += amount.value
            order.status = order.capturable == 0 ? "canceled" : "updated"
            order.events.append("order_canceled")
            state.orders[orderId] = order
            return .success((order, amount))
        }
        switch outcome {
        case nil: return TamaraWire.notFound("Order")
        case .failure(let refusal): return refusal.response
        case .success(let (order, amount)):
            return TamaraWire.response(.ok, ["cancel_id": SimulatorJSON.uuid(), "order_id": order.orderId, "status": order.status,
                                             "canceled_amount": TamaraWire.amount(amount)])
        }
    }

    /// `POST /checkout/{checkout_id}/void?order_id=…`: a checkout nobody paid
    /// is voided (the order turns `canceled`); any other is left alone.
    func void(_ checkoutId: String, orderId: String?) -> Response {
        let outcome: Bool? = simulator.state.withLock { state in
            guard let id = state.byCheckout[checkoutId], id == orderId, var order = state.order(id) else { return nil }
            guard order.status == "new" else { return false }
            order.status = "canceled"
            order.events.append("order_canceled")
            state.orders[id] = order
            return true
        }
        guard let voided = outcome else { return TamaraWire.notFound("Checkout") }
        return TamaraWire.response(.ok, ["order_was_voided": voided])
    }
}

/// A request Tamara refuses (HTTP 400, Tamara's error shape).
struct TamaraRefusal: Error {
    var message: String
    var code: String
    var response: Response { TamaraWire.response(.badRequest, TamaraWire.error(message, code)) }
}
