import Foundation
import GatewayAdapterSDK

/// STC Pay (DirectPayment V4), the wallet keyed by the payer's phone
/// number, as the method `stcpay` (SAR, Saudi Arabia).
///
/// authorize normalises the payer's number (``STCPayPhone``) and calls
/// `DirectPaymentAuthorize` (RefNum = the host's payment id, BillNumber =
/// the order id): `pending` with an `otp` action. continue sends the OTP to
/// `DirectPaymentConfirm`. verify asks `PaymentInquiry` by RefNum (STC Pay
/// has no webhook). refund calls `RefundPayment` with a RefNum made from the
/// request's idempotency key (``STCPayRefundRefNum``: the key itself, or its
/// digest when STC Pay would not take it), so a retry refunds once.
///
/// Config: `base_url` (`…/B2B.DirectPayment.WebApi/DirectPayment/V4`) and
/// `merchant_id` (sent as `X-ClientCode`) are required; optional
/// `branch_id`, `teller_id`, `device_id`, `request_timeout_ms`, and
/// `sandbox` (true only against the simulator: the OTP it "sent" is then
/// passed on as the action's `sandboxOtp`; without it an OTP in an answer is
/// never read). The mutual-TLS client certificate is the manifest's `tls`.
final class STCPayAdapter: PaymentAdapter {
    static let id = "stcpay"
    static let version = "1.0.0"

    let host: AdapterHost
    let client: STCPayClient
    let branchId: String
    let tellerId: String
    let deviceId: String
    let sandbox: Bool

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        _ = try configuration.providerURL(provider: "STC Pay", example: "https://<host>/B2B.DirectPayment.WebApi/DirectPayment/V4")
        let merchantId = try configuration.string("merchant_id", default: "")
        guard !merchantId.isEmpty, merchantId.count <= 64, merchantId.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw AdapterError.invalidConfiguration("config.merchant_id (the STC Pay merchant id sent as X-ClientCode) is required: up to 64 visible ASCII characters")
        }
        branchId = try configuration.string("branch_id", default: "")
        tellerId = try configuration.string("teller_id", default: "")
        deviceId = try configuration.string("device_id", default: "")
        switch configuration["sandbox"] {
        case nil: sandbox = false
        case .bool(let flag): sandbox = flag
        default: throw AdapterError.invalidConfiguration("config.sandbox must be true or false")
        }
        client = try STCPayClient(host: host, configuration: configuration, merchantId: merchantId)
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: ["stcpay"],
                           operations: [.authorize, .continue, .verify, .refund], currencies: ["SAR"])
    }

    /// Where the payment stands: its PaymentInquiry.
    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        try await verify(paymentId: request.paymentId, reference: request.providerReference)
    }
}
