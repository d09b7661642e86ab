import Foundation
import GatewayPayloads
import Hummingbird

/// `POST /api/v2/checkout` on one region's host: validates the session,
/// pre-scores the buyer (``TabbyPreScoring``) and creates the payment.
struct TabbyCheckoutAPI: Sendable {
    let simulator: TabbySimulator
    let sandbox: SandboxContext
    let region: TabbyRegion

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("api/v2/checkout") { request, _ -> Response in
            if let refusal = TabbyWire.unauthorized(request) { return refusal }
            do {
                return try api.checkout(try await TabbyWire.decode(TabbyWire.CheckoutRequest.self, request))
            } catch let refusal as TabbyWire.Refusal {
                return refusal.response
            }
        }
    }

    func checkout(_ body: TabbyWire.CheckoutRequest) throws(TabbyWire.Refusal) -> Response {
        let payment = try payment(from: body)
        let rejection = TabbyPreScoring.rejection(buyer: payment.buyer, amount: payment.total)
        var stored = payment
        if rejection != nil { stored.status = "REJECTED" }
        simulator.state.withLock { $0.add(stored) }
        let webURL = sandbox.base(of: simulator) + "/checkout/" + payment.sessionId
        var installments: [String: Any] = ["type": "installments", "is_available": rejection == nil]
        installments["rejection_reason"] = rejection ?? NSNull()
        let products: [String: Any] = rejection == nil ? ["installments": [["web_url": webURL]]] : [:]
        var configuration: [String: Any] = ["currency": payment.total.currency, "expires_at": SimulatorJSON.timestamp(payment.expiresAt)]
        configuration["available_products"] = products
        configuration["products"] = ["installments": installments]
        let urls: [String: Any] = ["success": payment.urls.success ?? "", "cancel": payment.urls.cancel ?? "", "failure": payment.urls.failure ?? ""]
        var session: [String: Any] = ["id": payment.sessionId, "status": rejection == nil ? "created" : "rejected"]
        session["payment"] = stored.document
        session["configuration"] = configuration
        session["lang"] = payment.lang
        session["merchant_code"] = payment.merchantCode ?? NSNull()
        session["merchant_urls"] = urls
        session["token"] = NSNull()
        session["flow"] = "regular"
        return TabbyWire.response(.ok, session)
    }

    private func payment(from body: TabbyWire.CheckoutRequest) throws(TabbyWire.Refusal) -> TabbyPayment {
        guard let payment = body.payment else { throw .badData("payment is required") }
        guard let currency = payment.currency, let home = TabbyRegion(currency: currency) else {
            throw .badData("payment.currency must be SAR, AED or KWD")
        }
        guard home == region else {
            throw .noPermission("payments in \(currency) are made on \(home.host), not \(region.host)")
        }
        let total = try TabbyWire.money(payment.amount, currency: currency, field: "payment.amount")
        let buyer = payment.buyer ?? TabbyWire.Buyer()
        guard let email = buyer.email, email.contains("@") else { throw .badData("payment.buyer.email is required") }
        guard let phone = buyer.phone, phone.contains(where: \.isNumber) else { throw .badData("payment.buyer.phone is required") }
        let urls = body.merchantUrls ?? TabbyWire.MerchantURLs()
        for (url, field) in [(urls.success, "success"), (urls.cancel, "cancel"), (urls.failure, "failure")] {
            guard let url, url.hasPrefix("https://") || url.hasPrefix("http://"), URL(string: url) != nil else {
                throw .badData("merchant_urls.\(field) must be an http(s) URL")
            }
        }
        let lang = body.lang ?? "en"
        guard lang == "en" || lang == "ar" else { throw .badData("lang must be en or ar") }
        for (index, item) in (payment.order?.items ?? []).enumerated() {
            guard let title = item.title, !title.isEmpty else { throw .badData("payment.order.items[\(index)].title is required") }
            guard (item.quantity ?? 0) > 0 else { throw .badData("payment.order.items[\(index)].quantity must be positive") }
            if let price = item.unitPrice, (try? Money(decimal: price, currency: currency)) == nil {
                throw .badData("payment.order.items[\(index)].unit_price must be an amount with at most \(Currency(code: currency)?.exponent ?? 2) decimals")
            }
        }
        return TabbyPayment(
            id: SimulatorJSON.uuid(), sessionId: SimulatorJSON.uuid(), region: region, total: total, description: payment.description,
            buyer: buyer, shippingAddress: payment.shippingAddress, order: payment.order ?? TabbyWire.Order(), meta: payment.meta,
            merchantCode: body.merchantCode, lang: lang, urls: urls, createdAt: Date())
    }
}
