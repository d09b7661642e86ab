import Foundation
import GatewayPayloads
import Hummingbird

/// `POST /payments/capture` and `POST /payments/simplified-refund/{order_id}`.
///
/// A capture moves money (it is what ``TamaraSimulator/charges`` counts) and
/// is bounded by what is authorised and not yet captured or canceled, so a
/// repeated full capture is refused rather than charged twice. Tamara
/// documents no idempotency key for captures. A refund with a
/// `merchant_refund_id` already used on the order gets the first answer back
/// and moves nothing again.
struct TamaraPayments: Sendable {
    let simulator: TamaraSimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let payments = self
        routes.post("payments/capture") { request, _ -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            do { return payments.capture(try await TamaraWire.decode(TamaraWire.CaptureRequest.self, request)) }
            catch let invalid as TamaraWire.Invalid { return TamaraWire.invalid(invalid) }
        }
        routes.post("payments/simplified-refund/:orderId") { request, context -> Response in
            if let refusal = TamaraWire.unauthorized(request) { return refusal }
            do { return payments.refund(context.parameters.get("orderId") ?? "", try await TamaraWire.decode(TamaraWire.RefundRequest.self, request)) }
            catch let invalid as TamaraWire.Invalid { return TamaraWire.invalid(invalid) }
        }
    }

    func capture(_ body: TamaraWire.CaptureRequest) -> Response {
        guard let orderId = body.orderId, !orderId.isEmpty else {
            return TamaraWire.invalid(.init(code: "order_id_required", field: "order_id", message: "order_id is required"))
        }
        guard let shipping = body.shippingInfo else {
            return TamaraWire.invalid(.init(code: "shipping_info_required", field: "shipping_info", message: "shipping_info is required"))
        }
        for (field, value) in [("shipped_at", shipping.shippedAt), ("shipping_company", shipping.shippingCompany)]
        where (value ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            return TamaraWire.invalid(.init(code: "\(field)_required", field: "shipping_info.\(field)", message: "shipping_info.\(field) is required"))
        }
        let outcome: Result<(TamaraOrder, Money), TamaraRefusal>? = simulator.state.withLock { state -> Result<(TamaraOrder, Money), TamaraRefusal>? in
            guard var order = state.order(orderId) else { return nil }
            let amount: Money
            do throws(TamaraWire.Invalid) { amount = try TamaraWire.money(body.totalAmount, field: "total_amount") }
            catch { return .failure(TamaraRefusal(message: error.message, code: error.code)) }
            guard ["authorised", "updated", "partially_captured"].contains(order.status) else {
                return .failure(TamaraRefusal(message: "Order status is \(order.status); only an authorised order can be captured",
                                              code: "order_status_not_allowed_to_capture"))
            }
            guard amount.currency == order.total.currency, amount.value <= order.capturable else {
                return .failure(TamaraRefusal(message: "Capture amount exceeds the \(order.capturable) minor units left to capture",
                                              code: "total_amount_invalid_limit"))
            }
            order.captured += amount.value
            order.status = order.capturable == 0 ? "fully_captured" : "partially_captured"
            order.events.append("order_captured")
            state.orders[orderId] = order
            state.charges += 1
            return .success((order, amount))
        }
        switch outcome {
        case nil: return TamaraWire.notFound("Order")
        case .failure(let refusal): return refusal.response
        case .success(let (order, amount)):
            return TamaraWire.response(.ok, ["capture_id": SimulatorJSON.uuid(), "order_id": order.orderId, "status": order.status,
                                             "captured_amount": TamaraWire.amount(amount)])
        }
    }

    func refund(_ orderId: String, _ body: TamaraWire.RefundRequest) -> Response {
        guard let comment = body.comment, !comment.isEmpty else {
            return TamaraWire.invalid(.init(code: "comment_required", field: "comment", message: "comment is required"))
        }
        let outcome: Result<String, TamaraRefusal>? = simulator.state.withLock { state -> Result<String, TamaraRefusal>? in
            guard var order = state.order(orderId) else { return nil }
            let key = body.merchantRefundId.map { orderId + "|" + $0 }
            if let key, let earlier = state.refunds[key] { return .success(earlier) }
            let amount: Money
            do throws(TamaraWire.Invalid) { amount = try TamaraWire.money(body.totalAmount, field: "total_amount") }
            catch { return .failure(TamaraRefusal(message: error.message, code: error.code)) }
            guard ["partially_captured", "fully_captured", "partially_refunded"].contains(order.status) else {
                return .failure(TamaraRefusal(message: "Order status is \(order.status); only a captured order can be refunded",
                                              code: "order_status_not_allowed_to_refund"))
            }
            guard amount.currency == order.total.currency, amount.value <= order.captured - order.refunded else {
                return .failure(TamaraRefusal(message: "Refund amount exceeds the \(order.captured - order.refunded) minor units captured and not refunded",
                                              code: "total_amount_invalid_limit"))
            }
            order.refunded += amount.value
            order.status = order.refunded == order.total.value - order.canceled ? "fully_refunded" : "partially_refunded"
            order.events.append("order_refunded")
            state.orders[orderId] = order
            var document: [String: Any] = ["order_id": orderId, "comment": comment, "refund_id": SimulatorJSON.uuid(),
                                           "capture_id": SimulatorJSON.uuid(), "status": order.status,
                                           "refunded_amount": TamaraWire.amount(amount)]
            if let id = body.merchantRefundId { document["merchant_refund_id"] = id }
            let text = TamaraWire.json(document)
            if let key { state.refunds[key] = text }
            return .success(text)
        }
        switch outcome {
        case nil: return TamaraWire.notFound("Order")
        case .failure(let refusal): return refusal.response
        case .success(let text):
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: .init(string: text)))
        }
    }
}
