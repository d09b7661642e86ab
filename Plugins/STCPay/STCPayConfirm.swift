import Foundation
import GatewayAdapterSDK

/// continue: the payer's OTP to `DirectPaymentConfirm`.
extension STCPayAdapter {
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        let reference = try STCPayReference(request.providerReference)
        guard let typed = request.otp?.filter({ !$0.isWhitespace }), !typed.isEmpty else {
            throw AdapterError.invalidRequest("otp is required: the code STC Pay sent to the payer by SMS")
        }
        guard typed.count <= 10, typed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw AdapterError.invalidRequest("otp must be the digits STC Pay sent by SMS")
        }
        let answer = try await client.send("DirectPaymentConfirm", STCPayWire.ConfirmRequest(
            OtpValue: typed, OtpReference: reference.otpReference, STCPayPmtReference: reference.pmtReference))
        if answer.ok {
            guard let confirmed = answer.message("DirectPaymentConfirm", STCPayWire.ConfirmAnswer.self),
                  confirmed.PaymentStatus == 2, let amount = Self.money(confirmed.Amount) else {
                // An answer that does not say "paid" plainly: ask STC Pay what happened.
                return try await verify(paymentId: request.paymentId, reference: request.providerReference)
            }
            return AdapterResult(status: .succeeded, providerReference: request.providerReference, amount: amount, providerStatus: "2")
        }
        guard (400..<500).contains(answer.status), let code = answer.failure?.Code else {
            throw AdapterError.outcomeUnknown("STC Pay's DirectPaymentConfirm answered \(answer.summary)")
        }
        switch code {
        case 2037:
            return wrongOTP(reference, request.providerReference, answer)
        case 2031:
            // Invalid, or burned by too many wrong tries: the inquiry tells which.
            let transactions = try await client.inquiry(request.paymentId)
            let current = transactions.first { $0.PaymentStatus == 2 } ?? transactions.last
            switch current?.PaymentStatus {
            case 1: return wrongOTP(reference, request.providerReference, answer)
            case 5:
                return AdapterResult(status: .failed, providerReference: request.providerReference, problem: AdapterProblem(
                    code: .otpAttemptsExceeded, message: "the one-time password is no longer valid after too many wrong tries or its expiry",
                    retryable: false, providerCode: "2031"), providerStatus: "5")
            default: return try await verify(paymentId: request.paymentId, reference: request.providerReference)
            }
        case 2023, 2026, 2027:
            var result = refusal(code, answer, safeElsewhere: false)
            result.providerReference = request.providerReference
            return result
        default:
            // 2009 already paid, 2001 and anything else: report what STC Pay holds.
            return try await verify(paymentId: request.paymentId, reference: request.providerReference)
        }
    }

    /// `pending`, the same `otp` action and a retryable `otp_invalid`.
    func wrongOTP(_ reference: STCPayReference, _ text: String, _ answer: STCPayAnswer) -> AdapterResult {
        let said = (answer.failure?.Text).map { " (STC Pay: \($0.prefix(200)))" } ?? ""
        return AdapterResult(status: .pending, providerReference: text, action: action(reference), problem: AdapterProblem(
            code: .otpInvalid, message: "wrong one-time password; ask the payer to type it again" + said, retryable: true,
            providerCode: answer.failure?.Code.map(String.init)), providerStatus: "1")
    }
}
