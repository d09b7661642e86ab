import Foundation

/// A webhook Tabby posts to the merchant's registered URL: the payment
/// object with its status in lower case, and the header the merchant
/// registered (``TabbySimulator/webhookHeader``) with its value. Tabby signs
/// nothing; the merchant confirms by fetching the payment.
public struct TabbyWebhook: Sendable {
    public var headers: [String: String]
    public var body: Data
}

extension TabbySimulator {
    /// The webhook for payment `paymentId` as it stands now, carrying
    /// `headerValue` (the sandbox's registered value unless told). Nil when
    /// the payment is unknown.
    public func webhook(forPayment paymentId: String, headerValue: String = TabbySimulator.webhookHeaderValue) -> TabbyWebhook? {
        guard let payment = state.withLock({ $0.payment(paymentId) }) else { return nil }
        var document = payment.document
        document["status"] = payment.status.lowercased()
        return TabbyWebhook(headers: ["Content-Type": "application/json", Self.webhookHeader: headerValue],
                            body: Data(SimulatorJSON.text(document).utf8))
    }
}
