import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for Tabby (buy now, pay later), both hosts in one:
/// `/tabby/sa/api/v2/…` is `api.tabby.sa` (SAR), `/tabby/ai/api/v2/…` is
/// `api.tabby.ai` (AED, KWD); a checkout or payment of the other region is
/// answered 403 `no_permission`.
///
/// - `POST /api/v2/checkout` (``TabbyCheckoutAPI``), pre-scored by
///   ``TabbyPreScoring``;
/// - the hosted payment page at `web_url` (``TabbyApprovalPage``);
/// - `GET /api/v2/payments/{id}`, `POST …/captures`, `POST …/refunds`,
///   `POST …/close` (``TabbyPaymentsAPI``);
/// - the webhook Tabby posts to the merchant (``webhook(forPayment:headerValue:)``).
///
/// A CREATED payment expires 30 minutes after creation; ``age(payment:by:)``
/// moves a payment's creation back so tests need not wait.
/// Errors are `{"status": "error", "errorType": …, "error": …}`.
public final class TabbySimulator: ProviderSimulator {
    public let id = "tabby"

    /// The secret key (`Authorization: Bearer`) the simulator accepts on both hosts.
    public static let secretKey = "sk_test_tabby_sandbox_5e2a9c7b1d4f6083"
    /// The header the sandbox merchant registered for webhooks, and its value.
    public static let webhookHeader = "X-Tabby-Webhook-Token"
    public static let webhookHeaderValue = "tabby-sandbox-webhook-token-8d3f1a6c2e9b4705"

    let state = Mutex(TabbyState())

    public init() {}

    public var charges: Int { state.withLock { $0.charges } }

    public var sandboxSecrets: [String: String] {
        ["secret_key": Self.secretKey, "webhook_header_value": Self.webhookHeaderValue]
    }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        for region in TabbyRegion.allCases {
            let host = routes.group(RouterPath(region.rawValue))
            TabbyCheckoutAPI(simulator: self, sandbox: sandbox, region: region).register(on: host)
            TabbyPaymentsAPI(simulator: self, region: region).register(on: host)
        }
        TabbyApprovalPage(simulator: self).register(on: routes)
    }

    /// Tabby's error document for a bare HTTP status.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        let (type, message) = switch status {
        case 401: ("not_authorized", "not authorized")
        case 403: ("no_permission", "no permission")
        case 404: ("not_found", "not found")
        case 409: ("conflict", "conflict")
        case 500...599: ("internal", "internal server error")
        default: ("bad_data", "bad request")
        }
        return ("application/json", SimulatorJSON.text(TabbyWire.error(type, message)))
    }

    /// The status of payment `paymentId` (expiry applied), or nil when unknown.
    public func status(ofPayment paymentId: String) -> String? {
        state.withLock { $0.payment(paymentId)?.status }
    }

    /// The `reference_id`s of payment `paymentId`'s captures and refunds, oldest first.
    public func referenceIds(ofPayment paymentId: String) -> (captures: [String], refunds: [String]) {
        state.withLock { state in
            let payment = state.payment(paymentId)
            return (payment?.captures.map(\.referenceId) ?? [], payment?.refunds.map(\.referenceId) ?? [])
        }
    }

    /// Removes the `meta` the merchant sent with payment `paymentId`, as a
    /// payment made on the same Tabby account by another integration looks.
    /// Returns false when the payment is unknown.
    @discardableResult
    public func forgetMeta(ofPayment paymentId: String) -> Bool {
        state.withLock { state in
            guard state.payments[paymentId] != nil else { return false }
            state.payments[paymentId]?.meta = nil
            return true
        }
    }

    /// Makes payment `paymentId` older by `seconds`, as if created that long
    /// before: a CREATED payment 30 minutes old turns EXPIRED on its next read.
    /// Returns false when the payment is unknown.
    @discardableResult
    public func age(payment paymentId: String, by seconds: TimeInterval) -> Bool {
        state.withLock { state in
            guard state.payments[paymentId] != nil else { return false }
            state.payments[paymentId]?.createdAt.addTimeInterval(-seconds)
            return true
        }
    }
}
