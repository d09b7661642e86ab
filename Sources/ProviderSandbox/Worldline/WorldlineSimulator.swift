import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for Worldline Direct: the server API a merchant signs
/// its requests to (``WorldlineServerAPI``: client sessions, card payments,
/// capture, cancel, refund; `GCS v1HMAC` signatures, idempotence keys), the
/// client API a payer's device encrypts card input with
/// (``WorldlineClientAPI``, ``WorldlineJWE``), the issuer's 3-D Secure page
/// (``WorldlineThreeDSPage``), and the webhooks Worldline would post
/// (``webhook(forPayment:keyID:secret:)``).
///
/// Under `/worldline/…`: the server API at `/worldline/v2/{merchantId}/…`
/// (`payment.direct.worldline-solutions.com`), the client API at
/// `/worldline/client/v1/{customerId}/…`, the 3-D Secure page at
/// `/worldline/3ds/{challenge}`.
///
/// Test data (ours, see ``WorldlineCards``): the cards `4111111111111111`,
/// `5555555555554444` and `378282246310005` are approved, `4000000000001091`
/// and `5200000000001096` ask for 3-D Secure, `4000000000000515`,
/// `4000000000003006`, `4000000000000549` and `4000000000000341` are
/// declined (insufficient funds, declined, expired, fraud), the CVV `000`
/// is refused; the tokens `sandbox-token-visa` (approved) and
/// `sandbox-token-3ds` (3-D Secure) exist for every merchant.
///
/// A charge is a sale's approval, or one capture of an authorisation;
/// refunds and cancels are not.
public final class WorldlineSimulator: ProviderSimulator {
    public let id = "worldline"

    /// The only merchant (`merchant_id`): another one in a path is refused with 403.
    public static let merchantID = "sandboxmerchant01"
    /// The API key id and secret a request must be signed with (`api_key_id`, `api_secret`).
    public static let apiKeyID = "wl-sandbox-key-1"
    public static let apiSecret = "wl-sandbox-secret-3f9c2a71e8d04b56a1c7"
    /// The webhook key id and secret webhooks are signed with (`webhook_key_id`, `webhook_secret`).
    public static let webhookKeyID = "sandbox-webhook-key-1"
    public static let webhookSecret = "wl-sandbox-webhook-secret-7d2e91c4a6b85f03"
    /// How long a client session lives (Connect's documented two hours, assumed the same on Direct).
    static let sessionLifetime: TimeInterval = 2 * 3600

    let state = Mutex(WorldlineState())

    public init() {}

    public var charges: Int { state.withLock { $0.charges } }

    public var sandboxSecrets: [String: String] {
        ["api_key_id": Self.apiKeyID, "api_secret": Self.apiSecret, "webhook_secret": Self.webhookSecret]
    }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        let base: @Sendable () -> String = { [unowned self] in sandbox.base(of: self) }
        WorldlineServerAPI(simulator: self, base: base).register(on: routes)
        WorldlineClientAPI(simulator: self).register(on: routes)
        WorldlineThreeDSPage(simulator: self).register(on: routes)
    }

    /// Worldline's error list for a bare status: 5xx is errorCode `9999`
    /// `UNKNOWN_SERVER_ERROR` (as in Worldline's SDK fixtures), the others
    /// the simulator's own refusals of that status.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        let refusal: WorldlineWire.Refusal = switch status {
        case 401: .unauthorized
        case 402: WorldlineWire.Refusal(402, "30051001", "AUTHORIZATION_DECLINED", "Authorisation declined")
        case 403: .forbidden
        case 404: .unknownPayment
        case 409: .idempotenceInFlight
        case 500...599: WorldlineWire.Refusal(status, "9999", "UNKNOWN_SERVER_ERROR", "UNKNOWN_SERVER_ERROR")
        default: WorldlineWire.Refusal(status, "21000020", "INVALID_VALUE", "The request could not be processed")
        }
        var issue = refusal.issue
        issue.httpStatusCode = status
        issue.retriable = status >= 500
        return ("application/json", SimulatorJSON.text(WorldlineWire.errorList([issue])))
    }

    /// `bytes` random bytes as lower-case hex.
    static func randomHex(_ bytes: Int) -> String {
        WorldlineJWE.randomBytes(bytes).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: For tests

    /// Payment `id` as the simulator holds it (masked card: BIN and last four).
    public func payment(_ id: String) -> WorldlinePaymentView? {
        state.withLock { $0.payments[id] }.map(WorldlinePaymentView.init)
    }

    /// The latest payment created with `merchantReference`.
    public func paymentId(forMerchantReference reference: String) -> String? {
        state.withLock { $0.paymentsOfReference[reference]?.last }
    }

    /// How many payments were created (declined ones included).
    public var paymentCount: Int { state.withLock { $0.payments.count } }

    /// The last server API request whose signature verified.
    public var lastSignedRequest: WorldlineSignedRequest? { state.withLock { $0.lastSignedRequest } }

    /// Ends client session `id` now: its client API calls and encrypted inputs are refused from then on.
    public func expire(clientSession id: String) {
        state.withLock { $0.sessions[id]?.expiresAt = Date(timeIntervalSince1970: 0) }
    }

    /// The open 3-D Secure challenge of payment `id` (its page is `/worldline/3ds/<challenge>`).
    public func challenge(ofPayment id: String) -> String? {
        state.withLock { $0.payments[id]?.challenge }
    }

    /// The webhook Worldline would post now about payment `id`: an event
    /// `payment.<status in lower case>` carrying the payment, signed with
    /// `secret` (`X-GCS-Signature`: base64 HMAC-SHA256 of the body) under
    /// `keyID` (`X-GCS-KeyId`). Nil when the payment is unknown.
    public func webhook(forPayment id: String, keyID: String = WorldlineSimulator.webhookKeyID,
                        secret: String = WorldlineSimulator.webhookSecret) -> (body: String, headers: [String: String])? {
        guard let payment = state.withLock({ $0.payments[id] }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        let body = SimulatorJSON.text([
            "apiVersion": "v1", "id": SimulatorJSON.uuid(), "created": formatter.string(from: Date()),
            "merchantId": payment.merchantID, "type": "payment." + payment.status.lowercased(),
            "payment": WorldlineWire.payment(payment),
        ])
        let signature = WorldlineAuthentication.signature(body, secret: secret)
        return (body, ["Content-Type": "application/json", "X-GCS-Signature": signature, "X-GCS-KeyId": keyID])
    }
}

/// A payment as a test sees it: amounts, status and the card's BIN and
/// last four digits, never its number.
public struct WorldlinePaymentView: Sendable, Equatable {
    public var id: String
    public var status: String
    public var statusCode: Int
    public var amount: Int64
    public var currency: String
    public var captured: Int64
    public var refunded: Int64
    public var merchantReference: String?
    public var authorizationMode: String
    /// The first six digits.
    public var cardBin: String
    public var cardLast4: String

    init(_ payment: WorldlinePayment) {
        id = payment.id
        status = payment.status
        statusCode = payment.statusCode
        amount = payment.amount
        currency = payment.currency
        captured = payment.captured
        refunded = payment.refunded
        merchantReference = payment.merchantReference
        authorizationMode = payment.authorizationMode
        cardBin = payment.card.bin
        cardLast4 = payment.card.last4
    }
}
