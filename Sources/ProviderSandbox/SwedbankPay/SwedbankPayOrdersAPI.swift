import Foundation
import Hummingbird

/// Payment orders: `POST /psp/paymentorders`, `GET /psp/paymentorders/{id}`
/// (`$expand=paid,financialtransactions,failedattempts,metadata`), `PATCH`
/// (abort), and the post-purchase operations `POST …/captures`,
/// `…/cancellations` and `…/reversals`, each under a `payeeReference`
/// unique per operation (a reused one is an `inputerror`).
struct SwedbankPayOrdersAPI: Sendable {
    let simulator: SwedbankPaySimulator
    let base: @Sendable () -> String

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("psp/paymentorders") { request, _ in try await api.guarded(request) { try api.create(try await SwedbankPayWire.body(request)) } }
        routes.get("psp/paymentorders/:id") { request, context in
            try await api.guarded(request) {
                let expand = Set((request.uri.queryParameters.get("$expand") ?? "").lowercased().split(separator: ",").map(String.init))
                return try api.read(context.parameters.get("id") ?? "", expand: expand)
            }
        }
        routes.patch("psp/paymentorders/:id") { request, context in
            try await api.guarded(request) { try api.abort(context.parameters.get("id") ?? "", try await SwedbankPayWire.body(request)) }
        }
        for (path, kind) in [("captures", "Capture"), ("cancellations", "Cancellation"), ("reversals", "Reversal")] {
            routes.post("psp/paymentorders/:id/\(path)") { request, context in
                try await api.guarded(request) { try api.transaction(kind, context.parameters.get("id") ?? "", try await SwedbankPayWire.body(request)) }
            }
        }
    }

    func guarded(_ request: Request, _ body: () async throws -> Response) async throws -> Response {
        simulator.received(request)
        if let refusal = SwedbankPayWire.unauthorized(request) { return refusal }
        do { return try await body() } catch let refusal as SwedbankPayWire.Refusal { return refusal.response }
    }

    func document(_ order: SwedbankPayOrder, expand: Set<String> = []) -> [String: Any] {
        SwedbankPayWire.order(order, api: simulator.apiBase(base()), pages: base(), expand: expand)
    }

    func create(_ body: [String: Any]) throws -> Response {
        guard let o = body["paymentorder"] as? [String: Any] else { throw SwedbankPayWire.Refusal.input("paymentorder", "The paymentorder field is required") }
        guard o["operation"] as? String == "Purchase" else { throw SwedbankPayWire.Refusal.input("paymentorder.operation", "Only Purchase is supported") }
        guard let currency = o["currency"] as? String, ["SEK", "NOK", "DKK", "EUR"].contains(currency) else {
            throw SwedbankPayWire.Refusal.input("paymentorder.currency", "The currency must be SEK, NOK, DKK or EUR")
        }
        guard let amount = (o["amount"] as? NSNumber)?.int64Value, amount > 0 else {
            throw SwedbankPayWire.Refusal.input("paymentorder.amount", "The amount must be a positive integer in minor units")
        }
        let vat = (o["vatAmount"] as? NSNumber)?.int64Value ?? -1
        guard vat >= 0, vat <= amount else { throw SwedbankPayWire.Refusal.input("paymentorder.vatAmount", "The vatAmount is required and at most the amount") }
        guard let description = o["description"] as? String, !description.isEmpty, description.count <= 40 else {
            throw SwedbankPayWire.Refusal.input("paymentorder.description", "A description of 1 to 40 characters is required")
        }
        guard let urls = o["urls"] as? [String: Any], let complete = urls["completeUrl"] as? String, URL(string: complete)?.scheme != nil,
              let hostUrls = urls["hostUrls"] as? [String], !hostUrls.isEmpty else {
            throw SwedbankPayWire.Refusal.input("paymentorder.urls", "urls.completeUrl and urls.hostUrls are required")
        }
        guard let payee = o["payeeInfo"] as? [String: Any], let payeeId = payee["payeeId"] as? String, !payeeId.isEmpty,
              let reference = payee["payeeReference"] as? String,
              reference.count <= 30, !reference.isEmpty, reference.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw SwedbankPayWire.Refusal.input("paymentorder.payeeInfo", "payeeInfo.payeeId and a payeeReference of 1 to 30 letters and digits are required")
        }
        // string(50): Swedbank Pay's Checkout v3 purchase reference (developer.swedbankpay.com).
        if let orderReference = payee["orderReference"] as? String, orderReference.count > 50 {
            throw SwedbankPayWire.Refusal.input("paymentorder.payeeInfo.orderReference", "orderReference is at most 50 characters")
        }
        let payerReference = (o["payer"] as? [String: Any])?["payerReference"] as? String
        let metadata = (o["metadata"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        let order = SwedbankPayOrder(
            id: SimulatorJSON.uuid(), token: SimulatorJSON.uuid().replacingOccurrences(of: "-", with: ""), payeeReference: reference,
            orderReference: payee["orderReference"] as? String, description: description, currency: currency, amount: amount, vatAmount: vat,
            language: o["language"] as? String ?? "en-US",
            urls: .init(hostUrls: hostUrls, completeUrl: complete, cancelUrl: urls["cancelUrl"] as? String,
                        callbackUrl: urls["callbackUrl"] as? String, termsOfServiceUrl: urls["termsOfServiceUrl"] as? String),
            payerReference: payerReference, generatePaymentToken: o["generatePaymentToken"] as? Bool ?? false, metadata: metadata,
            createdAt: Date())
        let duplicate = simulator.state.withLock { state -> Bool in
            guard !state.payeeReferences.contains(reference) else { return true }
            state.add(order)
            return false
        }
        if duplicate {
            throw SwedbankPayWire.Refusal.input("paymentorder.payeeInfo.payeeReference", "A payment order with this payeeReference already exists")
        }
        return SwedbankPayWire.answer(.created, document(order))
    }

    func order(_ id: String) throws -> SwedbankPayOrder {
        guard let order = simulator.state.withLock({ $0.orders[id] }) else { throw SwedbankPayWire.Refusal.notFound("No payment order \(id.prefix(64))") }
        return order
    }

    func read(_ id: String, expand: Set<String>) throws -> Response {
        SwedbankPayWire.answer(.ok, document(try order(id), expand: expand))
    }

    func abort(_ id: String, _ body: [String: Any]) throws -> Response {
        guard (body["paymentorder"] as? [String: Any])?["operation"] as? String == "Abort" else {
            throw SwedbankPayWire.Refusal.input("paymentorder.operation", "Only Abort is supported by PATCH")
        }
        let aborted: SwedbankPayOrder? = simulator.state.withLock { state in
            guard var order = state.orders[id], order.status == "Initialized" else { return nil }
            order.status = "Aborted"
            order.attempt = nil
            state.orders[id] = order
            return order
        }
        guard let aborted else {
            let current = try order(id)
            throw SwedbankPayWire.Refusal.notAllowed("The payment order is \(current.status) and can no longer be aborted")
        }
        return SwedbankPayWire.answer(.ok, document(aborted))
    }

    /// A capture, cancellation or reversal.
    func transaction(_ kind: String, _ id: String, _ body: [String: Any]) throws -> Response {
        guard let t = body["transaction"] as? [String: Any] else { throw SwedbankPayWire.Refusal.input("transaction", "The transaction field is required") }
        guard let reference = t["payeeReference"] as? String, !reference.isEmpty, reference.count <= 30,
              reference.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw SwedbankPayWire.Refusal.input("transaction.payeeReference", "A payeeReference of 1 to 30 letters and digits is required")
        }
        let amount = (t["amount"] as? NSNumber)?.int64Value
        let result: Result<SwedbankPayOrder, SwedbankPayWire.Refusal> = simulator.state.withLock { state in
            guard var order = state.orders[id] else { return .failure(.notFound("No payment order \(id.prefix(64))")) }
            guard !state.payeeReferences.contains(reference) else {
                return .failure(.input("transaction.payeeReference", "A transaction with this payeeReference already exists"))
            }
            let moved: Int64
            switch kind {
            case "Capture":
                guard let amount, amount > 0, amount <= order.remainingCapture else {
                    return .failure(.input("transaction.amount", "The amount must be positive and at most remainingCaptureAmount (\(order.remainingCapture))"))
                }
                moved = amount
                state.charges += 1
            case "Reversal":
                guard let amount, amount > 0, amount <= order.remainingReversal else {
                    return .failure(.input("transaction.amount", "The amount must be positive and at most remainingReversalAmount (\(order.remainingReversal))"))
                }
                moved = amount
            default:
                guard order.remainingCancellation > 0 else { return .failure(.notAllowed("Nothing is left to cancel on this payment order")) }
                moved = order.remainingCancellation
            }
            order.transactions.append(.init(type: kind, amount: moved, payeeReference: reference, number: state.number(), created: Date()))
            if kind == "Cancellation" { order.status = "Cancelled" }
            if kind == "Reversal", order.reversed == order.captured { order.status = "Reversed" }
            state.payeeReferences.insert(reference)
            state.orders[id] = order
            return .success(order)
        }
        switch result {
        case .success(let order): return SwedbankPayWire.answer(.ok, document(order, expand: ["financialtransactions"]))
        case .failure(let refusal): throw refusal
        }
    }
}
