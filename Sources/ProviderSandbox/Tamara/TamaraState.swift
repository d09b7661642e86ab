import Foundation
import GatewayPayloads

/// One Tamara order: what `POST /checkout` asked for, where the payer's
/// approval stands, and what capture, refund and cancel have done to it.
struct TamaraOrder: Sendable {
    var orderId: String
    var checkoutId: String
    var referenceId: String
    var orderNumber: String
    var description: String
    var countryCode: String
    var paymentType: String
    var instalments: Int?
    var total: Money
    var consumer: TamaraWire.Consumer
    var urls: TamaraWire.MerchantURL
    var additionalData: [String: String]?
    var status = "new"
    var createdAt = Date()
    var expiresAfter: TimeInterval = 30 * 60
    var wasAuthorised = false
    var captured: Int64 = 0
    var refunded: Int64 = 0
    var canceled: Int64 = 0
    /// Notification events in the order they happened (`order_approved`, …).
    var events: [String] = []

    /// What is authorised and neither canceled nor captured.
    var capturable: Int64 { wasAuthorised ? total.value - canceled - captured : 0 }
}

/// Everything the simulator remembers.
struct TamaraState: Sendable {
    var orders: [String: TamaraOrder] = [:]
    var byCheckout: [String: String] = [:]
    var byReference: [String: String] = [:]
    /// Refund answers by `order_id|merchant_refund_id`: a retried refund gets the first answer.
    var refunds: [String: String] = [:]
    var charges = 0

    /// The order, with expiry applied: a `new` order past its lifetime turns `expired`.
    mutating func order(_ id: String, now: Date = Date()) -> TamaraOrder? {
        guard var order = orders[id] else { return nil }
        if order.status == "new", now.timeIntervalSince(order.createdAt) > order.expiresAfter {
            order.status = "expired"
            order.events.append("order_expired")
            orders[id] = order
        }
        return order
    }

    mutating func add(_ order: TamaraOrder) {
        orders[order.orderId] = order
        byCheckout[order.checkoutId] = order.orderId
        byReference[order.referenceId] = order.orderId
    }
}
