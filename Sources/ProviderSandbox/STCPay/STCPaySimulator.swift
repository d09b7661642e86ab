import Foundation
import Hummingbird
import Synchronization

/// A local stand-in for STC Pay's DirectPayment V4 (a wallet keyed by the
/// payer's phone number, confirmed by an SMS OTP), under
/// `/stcpay/B2B.DirectPayment.WebApi/DirectPayment/V4/`:
/// - `DirectPaymentAuthorize`, `DirectPaymentConfirm` (``STCPayDirectPaymentAPI``);
/// - `PaymentInquiry` and the refund, `RefundPayment` (``STCPayInquiryAPI``).
///
/// Every request is a `POST` with `X-ClientCode: ` ``merchantId`` (else HTTP
/// 401); mutual TLS is the egress layer's and is not checked on loopback.
/// Bodies are wrapped as `{"<Op>V4RequestMessage": {…}}`, answers as
/// `{"<Op>V4ResponseMessage": {…}}`, errors are `{"Code", "Text"}` with HTTP
/// 400 (``STCPayWire``). There is no webhook: integrations poll the inquiry.
///
/// Each authorization "sends" a random 6-digit OTP, answered to the sandbox
/// only as `SandboxOtpValue` (also ``otp(forRefNum:)``); three wrong ones burn
/// it. It expires after ``expirySeconds`` (``expire(reference:)`` expires one
/// at once). Payers' numbers decide outcomes (``STCPaySandboxRules``: `…0000`
/// insufficient funds, `…0027` cancelled in the app, others pay).
public final class STCPaySimulator: ProviderSimulator {
    public let id = "stcpay"

    /// The sandbox merchant's id, expected in `X-ClientCode`.
    public static let merchantId = "61240056"

    /// How long an OTP (and its payment request) stays valid.
    public let expirySeconds: Int

    let state = Mutex(STCPayState())

    public init(expirySeconds: Int = 300) {
        self.expirySeconds = expirySeconds
    }

    public var charges: Int { state.withLock { $0.charges } }

    /// The mutual-TLS client certificate and key the adapter's manifest names.
    public var sandboxSecrets: [String: String] {
        ["client_certificate": STCPaySandboxCertificate.certificatePEM, "client_key": STCPaySandboxCertificate.privateKeyPEM]
    }

    public func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext) {
        let v4 = routes.group("B2B.DirectPayment.WebApi/DirectPayment/V4")
        STCPayDirectPaymentAPI(simulator: self).register(on: v4)
        STCPayInquiryAPI(simulator: self).register(on: v4)
    }

    /// STC Pay's error document for a bare HTTP status.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        ("application/json; charset=utf-8", SimulatorJSON.text(["Code": status, "Text": "Service unavailable (sandbox fault: HTTP \(status))"]))
    }

    /// PaymentStatus (1 pending, 2 paid, 4 cancelled, 5 expired) of the
    /// latest payment under `refNum`, or nil when there is none.
    public func status(ofRefNum refNum: String) -> Int? {
        state.withLock { $0.payments(refNum: refNum).last?.status }
    }

    /// The `BillNumber` of the latest payment under `refNum`.
    public func billNumber(ofRefNum refNum: String) -> String? {
        state.withLock { $0.payments(refNum: refNum).last?.billNumber }
    }

    /// The OTP "sent" for the latest payment under `refNum`.
    public func otp(forRefNum refNum: String) -> String? {
        state.withLock { $0.payments(refNum: refNum).last?.otp }
    }

    /// Halalas refunded of the paid payment under `refNum` (0 when none).
    public func refunded(ofRefNum refNum: String) -> Int64 {
        state.withLock { $0.payments(refNum: refNum).first { $0.status == 2 }?.refunded ?? 0 }
    }

    /// The merchant's `RefNum` of each refund of the paid payment under
    /// `refNum`, oldest first (each refunded once, however often it was sent).
    public func refundReferences(ofRefNum refNum: String) -> [String] {
        state.withLock { $0.payments(refNum: refNum).first { $0.status == 2 }?.refunds.map(\.reference) ?? [] }
    }

    /// The `MobileNo` the latest payment under `refNum` was authorized for.
    public func mobileNumber(ofRefNum refNum: String) -> String? {
        state.withLock { $0.payments(refNum: refNum).last?.mobile }
    }

    /// Expires the pending payment with `reference` (a `RefNum` or an
    /// `STCPayPmtReference`) now, as if its `ExpiryDuration` had run out.
    /// Returns false when no pending payment has that reference.
    @discardableResult
    public func expire(reference: String) -> Bool {
        state.withLock { state in
            let keys = (state.byRefNum[reference] ?? []) + (state.payments[reference] == nil ? [] : [reference])
            var expired = false
            for key in keys where state.payments[key]?.status == 1 {
                state.payments[key]?.expiresAt = Date(timeIntervalSince1970: 0)
                expired = true
            }
            return expired
        }
    }

    /// A random 6-digit code.
    func makeOTP() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int32(Int.random(in: 0..<1_000_000, using: &generator)))
    }
}
