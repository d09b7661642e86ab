import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for Tamara (buy now, pay later): `POST /checkout`, the
/// hosted approval page (``TamaraCheckoutPage``), `GET /orders/{id}`,
/// `POST /orders/{id}/authorise`, `POST /orders/{id}/cancel`,
/// `POST /payments/capture`, `POST /payments/simplified-refund/{id}`,
/// `POST /checkout/{id}/void`, and the JWT-signed notifications Tamara posts
/// to the merchant (``notification(forOrder:event:key:lifetime:)``).
///
/// Amounts are JSON numbers in major units (`300`, `100.5`, `1.234` KWD), as
/// Tamara's examples send and answer them. Errors are
/// `{"message": …, "errors": [{"error_code": …, "data": …}]}`.
public final class TamaraSimulator: ProviderSimulator {
    public let id = "tamara"

    /// The API token (`Authorization: Bearer`) the simulator accepts.
    public static let apiToken = "tamara-sandbox-api-token-7c1e9a4b2d6f8035"
    /// The notification token notifications' JWTs are signed with (HS256).
    public static let notificationToken = "tamara-sandbox-notification-token-5b8d2e6f1a9c4703"

    let state = Mutex(TamaraState())

    public init() {}

    public var charges: Int { state.withLock { $0.charges } }

    public var sandboxSecrets: [String: String] {
        ["api_token": Self.apiToken, "notification_token": Self.notificationToken]
    }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        TamaraAPI(simulator: self, sandbox: sandbox).register(on: routes)
        TamaraPayments(simulator: self).register(on: routes)
        TamaraCheckoutPage(simulator: self).register(on: routes)
    }

    /// Tamara's error document for a bare HTTP status.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        let (message, code) = switch status {
        case 401: ("Unauthorized", "unauthorized")
        case 403: ("Forbidden", "forbidden")
        case 404: ("Not found", "not_found")
        case 429: ("Too many requests", "too_many_requests")
        case 500...599: ("Internal server error", "internal_server_error")
        default: ("Bad request", "bad_request")
        }
        return ("application/json", TamaraWire.json(TamaraWire.error(message, code)))
    }

    /// The status of order `orderId` (expiry applied), or nil when unknown.
    public func status(ofOrder orderId: String) -> String? {
        state.withLock { $0.order(orderId)?.status }
    }

    /// Order `orderId`'s `order_number` and `description`, as created.
    public func labels(ofOrder orderId: String) -> (orderNumber: String, description: String)? {
        state.withLock { $0.orders[orderId].map { ($0.orderNumber, $0.description) } }
    }

    /// The order id created for `orderReferenceId` (the latest, if several).
    public func orderId(forReference orderReferenceId: String) -> String? {
        state.withLock { $0.byReference[orderReferenceId] }
    }

    /// Makes order `orderId` older by `seconds`, as if created that long
    /// before: an unapproved order past its expiry (30 minutes unless
    /// `expires_in_minutes` said otherwise) turns `expired` on its next read.
    /// Returns false when the order is unknown.
    @discardableResult
    public func age(order orderId: String, by seconds: TimeInterval) -> Bool {
        state.withLock { state in
            guard state.orders[orderId] != nil else { return false }
            state.orders[orderId]?.createdAt.addTimeInterval(-seconds)
            return true
        }
    }
}
