import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for HyperPay (OPPWA COPYandPAY): `POST /v1/checkouts`
/// (form-encoded, Bearer token), the hosted card widget with its 3-D Secure
/// step (``HyperPayWidget``), `GET /v1/checkouts/{id}/payment`, back-office
/// `POST /v1/payments/{id}` (CP, RF, RV) and encrypted notifications
/// (``notification(forCheckout:)``).
///
/// Two sandbox entities: ``entityId`` for Visa, Mastercard and Apple Pay,
/// ``madaEntityId`` for mada. A mada card paid on the card entity, or another
/// brand on the mada entity, fails with `600.200.500`, as a live entity not
/// configured for that brand does.
public final class HyperPaySimulator: ProviderSimulator {
    public let id = "hyperpay"

    /// The sandbox entity for Visa, Mastercard and Apple Pay.
    public static let entityId = "8ac7a4c97d1f3f6a017d1f4a5b2c0001"
    /// The sandbox entity for mada.
    public static let madaEntityId = "8ac7a4c97d1f3f6a017d1f4a5b2c0002"
    /// The Bearer token the simulator accepts.
    public static let accessToken = "OGFjN2E0Yzk3ZDFmM2Y2YTAxN2QxZjRhNWIyYzAwMDF8c2FuZGJveC1oeXBlcnBheQ=="
    /// The notification key (AES-256, hex) webhooks are encrypted with.
    public static let webhookKey = "3f1c9a7e5b2d4c6e8a0b1d3f5e7c9a2b4d6f8e0a1c3e5b7d9f2a4c6e8b0d2f41"

    let state = Mutex(HyperPayState())

    public init() {}

    public var charges: Int { state.withLock { $0.charges } }
    /// What checkout `checkoutId` was labelled with: `merchantInvoiceId`
    /// and `customer.email` as sent (nil: not sent).
    public func labels(ofCheckout checkoutId: String) -> (invoiceId: String?, email: String?)? {
        state.withLock { $0.checkouts[checkoutId].map { ($0.merchantInvoiceId, $0.customerEmail) } }
    }

    /// The checkouts it holds (a request refused before sending made none).
    public var checkouts: Int { state.withLock { $0.checkouts.count } }

    public var sandboxSecrets: [String: String] {
        ["access_token": Self.accessToken, "webhook_key": Self.webhookKey]
    }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        HyperPayAPI(simulator: self).register(on: routes)
        HyperPayWidget(simulator: self, sandbox: sandbox).register(on: routes)
    }

    /// OPPWA's error document for a bare status: `800.900.300` for 401/403,
    /// `800.120.100` for 429, `900.100.100` for a 5xx, `200.300.404` otherwise.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        let code = switch status {
        case 401, 403: HyperPayResultCode.invalidAuthentication
        case 429: HyperPayResultCode.throttled
        case 500...599: HyperPayResultCode.communicationError
        default: HyperPayResultCode.invalidParameter
        }
        return ("application/json;charset=UTF-8", SimulatorJSON.text(HyperPayWire.document(code)))
    }

    /// The transaction paid in checkout `checkoutId`'s widget, as the status
    /// query answers it (nil before the shopper paid).
    func payment(ofCheckout checkoutId: String) -> HyperPayTransaction? {
        state.withLock { state in state.checkouts[checkoutId]?.paymentId.flatMap { state.transactions[$0] } }
    }

    /// The payment id of checkout `checkoutId`, once paid.
    public func paymentId(ofCheckout checkoutId: String) -> String? {
        state.withLock { $0.checkouts[checkoutId]?.paymentId }
    }

    /// The refunds (RF) OPPWA holds against transaction `id` (a DB, CP or
    /// PA): how many, and their total in minor units. A retried RF answered
    /// from its first try is not counted again.
    public func refunds(of id: String) -> (count: Int, total: Int64) {
        state.withLock { state in
            let refunds = state.transactions.values.filter { $0.paymentType == "RF" && $0.referencedId == id && HyperPayResultCode.moved($0.code) }
            return (refunds.count, refunds.reduce(0) { $0 + $1.amount.value })
        }
    }

    /// The result code of checkout `checkoutId`'s payment, once paid.
    public func resultCode(ofCheckout checkoutId: String) -> String? {
        payment(ofCheckout: checkoutId)?.code
    }
}
