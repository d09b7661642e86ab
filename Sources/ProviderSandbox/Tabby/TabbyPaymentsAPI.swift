import Foundation
import GatewayPayloads
import Hummingbird

/// `GET /api/v2/payments/{id}`, `POST …/captures`, `POST …/refunds` and
/// `POST …/close` on one region's host.
///
/// Captures and refunds are idempotent by `reference_id`: a repeated one
/// answers the payment as it stands and moves nothing again (the same
/// reference with another amount is a 409 `conflict`). A capture of all that
/// is left closes the payment (`CLOSED`); only a `CLOSED` payment with
/// captures can be refunded; close releases what is not captured. Each new
/// capture is a charge (``TabbySimulator/charges``).
struct TabbyPaymentsAPI: Sendable {
    let simulator: TabbySimulator
    let region: TabbyRegion

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.get("api/v2/payments/:id") { request, context -> Response in
            if let refusal = TabbyWire.unauthorized(request) { return refusal }
            return api.answer { (_: inout TabbyPayment) throws(TabbyWire.Refusal) in }(context.parameters.get("id") ?? "")
        }
        routes.post("api/v2/payments/:id/captures") { request, context -> Response in
            if let refusal = TabbyWire.unauthorized(request) { return refusal }
            do {
                let body = try await TabbyWire.decode(TabbyWire.MovementRequest.self, request)
                return api.answer { (payment: inout TabbyPayment) throws(TabbyWire.Refusal) in try api.capture(&payment, body) }(context.parameters.get("id") ?? "")
            } catch let refusal as TabbyWire.Refusal {
                return refusal.response
            }
        }
        routes.post("api/v2/payments/:id/refunds") { request, context -> Response in
            if let refusal = TabbyWire.unauthorized(request) { return refusal }
            do {
                let body = try await TabbyWire.decode(TabbyWire.MovementRequest.self, request)
                return api.answer { (payment: inout TabbyPayment) throws(TabbyWire.Refusal) in try api.refund(&payment, body) }(context.parameters.get("id") ?? "")
            } catch let refusal as TabbyWire.Refusal {
                return refusal.response
            }
        }
        routes.post("api/v2/payments/:id/close") { request, context -> Response in
            if let refusal = TabbyWire.unauthorized(request) { return refusal }
            return api.answer { (payment: inout TabbyPayment) throws(TabbyWire.Refusal) in try api.close(&payment) }(context.parameters.get("id") ?? "")
        }
    }

    /// Finds the payment on this host, applies `change` under the lock and
    /// answers the payment object (or the refusal).
    func answer(_ change: @escaping (inout TabbyPayment) throws(TabbyWire.Refusal) -> Void) -> (String) -> Response {
        { id in
            let outcome: Result<TabbyPayment, TabbyWire.Refusal> = simulator.state.withLock { state in
                guard var payment = state.payment(id) else { return .failure(.notFound("payment \(id.prefix(64)) not found")) }
                guard payment.region == region else {
                    return .failure(.noPermission("payment \(id.prefix(64)) belongs to \(payment.region.host), not \(region.host)"))
                }
                let charges = payment.captures.count
                do throws(TabbyWire.Refusal) { try change(&payment) } catch { return .failure(error) }
                state.payments[id] = payment
                state.charges += payment.captures.count - charges
                return .success(payment)
            }
            switch outcome {
            case .success(let payment): return TabbyWire.response(.ok, payment.document)
            case .failure(let refusal): return refusal.response
            }
        }
    }

    /// The earlier movement with `referenceId`, after checking it asked for the same amount.
    private func earlier(_ movements: [TabbyMovement], _ referenceId: String, _ amount: String?, currency: String) throws(TabbyWire.Refusal) -> TabbyMovement? {
        guard let found = movements.first(where: { $0.referenceId == referenceId }) else { return nil }
        guard let amount, (try? Money(decimal: amount, currency: currency))?.value == found.amount else {
            throw .conflict("reference_id \(referenceId.prefix(64)) was already used with amount \(TabbyWire.amount(found.amount, currency))")
        }
        return found
    }

    func capture(_ payment: inout TabbyPayment, _ body: TabbyWire.MovementRequest) throws(TabbyWire.Refusal) {
        guard let referenceId = body.referenceId, !referenceId.isEmpty else { throw .badData("reference_id is required") }
        if try earlier(payment.captures, referenceId, body.amount, currency: payment.total.currency) != nil { return }
        let amount = try TabbyWire.money(body.amount, currency: payment.total.currency, field: "amount")
        guard payment.status == "AUTHORIZED" else { throw .badData("payment is \(payment.status); only an AUTHORIZED payment can be captured") }
        guard amount.value <= payment.capturable else {
            throw .badData("capture amount \(TabbyWire.amount(amount.value, amount.currency)) exceeds the \(TabbyWire.amount(payment.capturable, amount.currency)) left to capture")
        }
        payment.captures.append(TabbyMovement(id: SimulatorJSON.uuid(), amount: amount.value, referenceId: referenceId, createdAt: Date()))
        if payment.captured == payment.total.value { payment.status = "CLOSED" }
    }

    func refund(_ payment: inout TabbyPayment, _ body: TabbyWire.MovementRequest) throws(TabbyWire.Refusal) {
        guard let referenceId = body.referenceId, !referenceId.isEmpty else { throw .badData("reference_id is required") }
        if try earlier(payment.refunds, referenceId, body.amount, currency: payment.total.currency) != nil { return }
        let amount = try TabbyWire.money(body.amount, currency: payment.total.currency, field: "amount")
        guard payment.status == "CLOSED", payment.captured > 0 else {
            throw .badData("payment is \(payment.status) with \(payment.captures.count) captures; only a captured, CLOSED payment can be refunded")
        }
        let left = payment.captured - payment.refunded
        guard amount.value <= left else {
            throw .badData("refund amount \(TabbyWire.amount(amount.value, amount.currency)) exceeds the \(TabbyWire.amount(left, amount.currency)) captured and not refunded")
        }
        payment.refunds.append(TabbyMovement(id: SimulatorJSON.uuid(), amount: amount.value, referenceId: referenceId, reason: body.reason, createdAt: Date()))
    }

    func close(_ payment: inout TabbyPayment) throws(TabbyWire.Refusal) {
        switch payment.status {
        case "AUTHORIZED": payment.status = "CLOSED"
        case "CLOSED": throw .badData("payment is already closed")
        default: throw .badData("payment is \(payment.status); only an AUTHORIZED payment can be closed")
        }
    }
}
