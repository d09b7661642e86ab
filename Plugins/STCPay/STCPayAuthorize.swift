import Foundation
import GatewayAdapterSDK

/// authorize: `DirectPaymentAuthorize`, answered `pending` with an `otp` action.
extension STCPayAdapter {
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard request.method == "stcpay" else { throw AdapterError.invalidRequest("method \"\(request.method.prefix(40))\" is not offered by STC Pay (only stcpay)") }
        guard request.amount.currency == "SAR" else {
            throw AdapterError.invalidRequest("amount.currency \(request.amount.currency.prefix(8)) is not supported: STC Pay takes SAR only")
        }
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        if let country = request.country, country != "SA" {
            throw AdapterError.invalidRequest("country \(country.prefix(8)) is not supported: STC Pay serves SA only")
        }
        let mobile: String
        if let phone = request.payer?.phone, !phone.isEmpty {
            mobile = try STCPayPhone.normalise(phone, field: "payer.phone")
        } else if case .string(let phone)? = request.instrument?["phone"] {
            mobile = try STCPayPhone.normalise(phone, field: "instrument.phone")
        } else {
            throw AdapterError.invalidRequest("payer.phone (or instrument.phone) is required: STC Pay identifies the payer's wallet by a Saudi mobile number")
        }
        guard request.paymentId.count <= 50, request.orderId.count <= 50, !request.orderId.isEmpty else {
            throw AdapterError.invalidRequest("paymentId and orderId must be 1 to 50 characters for STC Pay's RefNum and BillNumber")
        }
        let message = STCPayWire.AuthorizeRequest(
            MobileNo: mobile, RefNum: request.paymentId, BillNumber: request.orderId, Amount: try Self.amount(request.amount),
            BranchID: branchId, TellerID: tellerId, DeviceID: deviceId, MerchantNote: "Order \(request.orderId)")
        let answer = try await client.send("DirectPaymentAuthorize", message)
        if answer.ok, let started = answer.message("DirectPaymentAuthorize", STCPayWire.AuthorizeAnswer.self),
           let otpReference = started.OtpReference, let pmtReference = started.STCPayPmtReference,
           STCPayReference.isToken(otpReference), STCPayReference.isToken(pmtReference) {
            let expiry = max(0, started.ExpiryDuration ?? 300)
            // The simulator's OTP is read only in sandbox mode: production never passes one on.
            let otp = sandbox ? started.SandboxOtpValue.flatMap { $0.allSatisfy(\.isNumber) && $0.count <= 8 ? $0 : nil } : nil
            let reference = STCPayReference(otpReference: otpReference, pmtReference: pmtReference,
                                            expiresAt: Int64(host.now.timeIntervalSince1970) + Int64(expiry), sandboxOtp: otp)
            return AdapterResult(status: .pending, providerReference: reference.text, amount: request.amount,
                                 action: action(reference), providerStatus: "1")
        }
        guard (400..<500).contains(answer.status), let code = answer.failure?.Code else {
            throw AdapterError.outcomeUnknown("STC Pay's DirectPaymentAuthorize answered \(answer.summary)")
        }
        if code == 2009 { return try await verify(paymentId: request.paymentId, reference: nil) }
        // DirectPaymentAuthorize moves no money: a refusal is provably not a charge.
        return refusal(code, answer, safeElsewhere: true)
    }

    /// The `otp` action for `reference`.
    func action(_ reference: STCPayReference) -> PaymentAction {
        PaymentAction(type: .otp, otpLength: 6, expiresAt: Self.timestamp(reference.expiresAt),
                      sandboxOtp: sandbox ? reference.sandboxOtp : nil)
    }

    /// The result for STC Pay's error `code` (2023, 2026, 2027, 2031, 2037, 2001, …).
    func refusal(_ code: Int, _ answer: STCPayAnswer, safeElsewhere: Bool) -> AdapterResult {
        let text = String((answer.failure?.Text ?? "").prefix(200))
        func problem(_ name: ProblemCode, _ message: String, retryable: Bool) -> AdapterProblem {
            AdapterProblem(code: name, message: message + (text.isEmpty ? "" : " (STC Pay: \(text))"), retryable: retryable,
                           safeToRetryElsewhere: safeElsewhere, providerCode: String(code))
        }
        if answer.status == 401 || answer.status == 403 {
            return AdapterResult(status: .failed, problem: problem(.providerError, "STC Pay refused the merchant's credentials (check config.merchant_id and the client certificate)", retryable: false), providerStatus: String(code))
        }
        return switch code {
        case 2023: AdapterResult(status: .failed, problem: problem(.insufficientFunds, "the STC Pay wallet has insufficient balance", retryable: false), providerStatus: String(code))
        case 2026: AdapterResult(status: .failed, problem: problem(.expired, "the STC Pay payment request expired", retryable: false), providerStatus: String(code))
        case 2027: AdapterResult(status: .cancelled, problem: problem(.userCancelled, "the payer cancelled the payment in STC Pay", retryable: true), providerStatus: String(code))
        default: AdapterResult(status: .failed, problem: problem(.providerError, "STC Pay refused the request with code \(code)", retryable: false), providerStatus: String(code))
        }
    }

    /// Minor units as STC Pay's SAR amount, exactly (`15000` → `150.00`).
    static func amount(_ money: Money) throws -> Decimal {
        guard let decimal = Decimal(string: try money.decimalString(), locale: Locale(identifier: "en_US_POSIX")) else {
            throw AdapterError.invalidRequest("amount \(money.value) \(money.currency) cannot be written as a decimal")
        }
        return decimal
    }

    /// STC Pay's SAR amount as money; nil when it is not a plain amount.
    static func money(_ amount: Decimal?) -> Money? {
        guard let amount else { return nil }
        return try? Money(decimal: "\(amount)", currency: "SAR")
    }

    static func timestamp(_ unixSeconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }
}
