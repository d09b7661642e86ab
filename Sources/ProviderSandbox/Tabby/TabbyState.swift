import Foundation
import GatewayPayloads

/// A capture or a refund: an amount moved under the merchant's `reference_id`.
struct TabbyMovement: Sendable {
    var id: String
    var amount: Int64
    var referenceId: String
    var reason: String?
    var createdAt: Date
}

/// One Tabby payment: what the checkout session asked for, where the payer's
/// approval stands, and what captures, refunds and a close have done to it.
struct TabbyPayment: Sendable {
    var id: String
    var sessionId: String
    var region: TabbyRegion
    var total: Money
    var description: String?
    var buyer: TabbyWire.Buyer
    var shippingAddress: TabbyWire.Address?
    var order: TabbyWire.Order
    var meta: [String: String]?
    var merchantCode: String?
    var lang: String
    var urls: TabbyWire.MerchantURLs
    /// CREATED, AUTHORIZED, CLOSED, REJECTED or EXPIRED.
    var status = "CREATED"
    var createdAt: Date
    var captures: [TabbyMovement] = []
    var refunds: [TabbyMovement] = []

    /// How long an unauthorized payment lives.
    static let lifetime: TimeInterval = 30 * 60

    var expiresAt: Date { createdAt.addingTimeInterval(Self.lifetime) }
    var captured: Int64 { captures.reduce(0) { $0 + $1.amount } }
    var refunded: Int64 { refunds.reduce(0) { $0 + $1.amount } }
    /// Authorized and not yet captured.
    var capturable: Int64 { status == "AUTHORIZED" ? total.value - captured : 0 }

    /// The payment object `GET /api/v2/payments/{id}` answers.
    var document: [String: Any] {
        let currency = total.currency
        func movement(_ m: TabbyMovement) -> [String: Any] {
            var entry: [String: Any] = ["id": m.id, "amount": TabbyWire.amount(m.amount, currency), "reference_id": m.referenceId,
                                        "created_at": SimulatorJSON.timestamp(m.createdAt)]
            if let reason = m.reason { entry["reason"] = reason }
            return entry
        }
        var buyer: [String: Any] = [:]
        if let name = self.buyer.name { buyer["name"] = name }
        if let email = self.buyer.email { buyer["email"] = email }
        if let phone = self.buyer.phone { buyer["phone"] = phone }
        var order: [String: Any] = ["reference_id": self.order.referenceId ?? ""]
        order["items"] = (self.order.items ?? []).map { item -> [String: Any] in
            var entry: [String: Any] = ["title": item.title ?? "", "quantity": item.quantity ?? 1,
                                        "unit_price": item.unitPrice ?? "0", "category": item.category ?? ""]
            if let reference = item.referenceId { entry["reference_id"] = reference }
            return entry
        }
        var document: [String: Any] = [
            "id": id, "status": status, "is_test": true, "created_at": SimulatorJSON.timestamp(createdAt),
            "expires_at": SimulatorJSON.timestamp(expiresAt), "amount": TabbyWire.amount(total.value, currency),
            "currency": currency, "buyer": buyer, "order": order, "product": ["type": "installments", "installments_count": 4],
            "captures": captures.map(movement), "refunds": refunds.map(movement),
        ]
        if let description { document["description"] = description }
        if let address = shippingAddress {
            document["shipping_address"] = ["city": address.city ?? "", "address": address.address ?? "", "zip": address.zip ?? ""]
        }
        if let meta { document["meta"] = meta }
        return document
    }
}

/// Everything the simulator remembers.
struct TabbyState: Sendable {
    var payments: [String: TabbyPayment] = [:]
    /// Checkout session id → payment id.
    var sessions: [String: String] = [:]
    var charges = 0

    /// The payment, with expiry applied: a CREATED payment 30 minutes old turns EXPIRED.
    mutating func payment(_ id: String, now: Date = Date()) -> TabbyPayment? {
        guard var payment = payments[id] else { return nil }
        if payment.status == "CREATED", now >= payment.expiresAt {
            payment.status = "EXPIRED"
            payments[id] = payment
        }
        return payment
    }

    mutating func payment(ofSession sessionId: String) -> TabbyPayment? {
        sessions[sessionId].flatMap { payment($0) }
    }

    mutating func add(_ payment: TabbyPayment) {
        payments[payment.id] = payment
        sessions[payment.sessionId] = payment.id
    }
}
