import Foundation
import Hummingbird

/// `DirectPaymentAuthorize` and `DirectPaymentConfirm`.
///
/// Authorize "sends" a 6-digit OTP to `MobileNo` and answers its references
/// and `ExpiryDuration`. A repeated authorize under the same `RefNum` while
/// that payment is pending answers the same references (nothing new is sent),
/// with another amount it is 2001; once paid it is 2009; after an expiry or a
/// cancellation it starts a new payment under the same `RefNum`.
///
/// Confirm checks, in order: the references (2001), a paid payment (2009), a
/// cancelled one (2027), an expired one (2026), a burned OTP (2031), the OTP
/// (2037 while tries are left; the third wrong one burns it, 2031, and the
/// payment expires), then the payer's number (``STCPaySandboxRules``). A paid
/// confirm is a charge.
struct STCPayDirectPaymentAPI: Sendable {
    let simulator: STCPaySimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.post("DirectPaymentAuthorize") { request, _ -> Response in
            do throws(STCPayWire.Refusal) {
                try STCPayWire.checkClient(request)
                let body = try await STCPayWire.decode(STCPayWire.AuthorizeRequest.self, operation: "DirectPaymentAuthorize", request)
                return STCPayWire.answer("DirectPaymentAuthorize", try api.authorize(body))
            } catch {
                return error.response
            }
        }
        routes.post("DirectPaymentConfirm") { request, _ -> Response in
            do throws(STCPayWire.Refusal) {
                try STCPayWire.checkClient(request)
                let body = try await STCPayWire.decode(STCPayWire.ConfirmRequest.self, operation: "DirectPaymentConfirm", request)
                return STCPayWire.answer("DirectPaymentConfirm", try api.confirm(body))
            } catch {
                return error.response
            }
        }
    }

    func authorize(_ body: STCPayWire.AuthorizeRequest) throws(STCPayWire.Refusal) -> STCPayMessages.Authorize {
        guard let mobile = body.MobileNo, STCPaySandboxRules.isMobileNumber(mobile) else {
            throw .badFormat("MobileNo must be a Saudi mobile number in international form, 9665XXXXXXXX")
        }
        guard let refNum = body.RefNum, !refNum.isEmpty, refNum.count <= 50 else { throw .badFormat("RefNum is required (at most 50 characters)") }
        let billNumber = body.BillNumber ?? ""
        guard !billNumber.isEmpty, billNumber.count <= 50 else { throw .badFormat("BillNumber is required (at most 50 characters)") }
        let halalas = try STCPayWire.halalas(body.Amount)
        let expiry = simulator.expirySeconds
        let otp = simulator.makeOTP()
        let result: Result<STCPayPayment, STCPayWire.Refusal> = simulator.state.withLock { state in
            let earlier = state.payments(refNum: refNum)
            if earlier.contains(where: { $0.status == 2 }) { return .failure(.alreadyPaid) }
            if let pending = earlier.last(where: { $0.status == 1 }) {
                guard pending.halalas == halalas, pending.mobile == mobile else {
                    return .failure(.badFormat("RefNum \(refNum.prefix(50)) is already pending with another amount or MobileNo"))
                }
                return .success(pending)
            }
            let payment = STCPayPayment(
                otpReference: state.nextReference(), pmtReference: state.nextReference(), refNum: refNum, billNumber: billNumber,
                mobile: mobile, halalas: halalas, otp: otp, attemptsLeft: STCPayPayment.attempts,
                expiresAt: Date().addingTimeInterval(TimeInterval(expiry)))
            state.add(payment)
            return .success(payment)
        }
        let payment = try result.get()
        let left = max(0, Int(payment.expiresAt.timeIntervalSinceNow.rounded(.up)))
        return STCPayMessages.Authorize(OtpReference: payment.otpReference, STCPayPmtReference: payment.pmtReference,
                                        ExpiryDuration: left, SandboxOtpValue: payment.otp)
    }

    func confirm(_ body: STCPayWire.ConfirmRequest) throws(STCPayWire.Refusal) -> STCPayMessages.Confirm {
        guard let otp = body.OtpValue, !otp.isEmpty else { throw .badFormat("OtpValue is required") }
        guard let otpReference = body.OtpReference, let pmtReference = body.STCPayPmtReference else {
            throw .badFormat("OtpReference and STCPayPmtReference are required")
        }
        let result: Result<STCPayPayment, STCPayWire.Refusal> = simulator.state.withLock { state in
            guard var payment = state.payment(pmtReference), payment.otpReference == otpReference else {
                return .failure(.badFormat("unknown OtpReference or STCPayPmtReference"))
            }
            switch payment.status {
            case 2: return .failure(.alreadyPaid)
            case 4: return .failure(.cancelled)
            case 5: return .failure(payment.attemptsLeft == 0 ? .otpInvalid : .expired)
            default: break
            }
            guard otp == payment.otp else {
                payment.attemptsLeft -= 1
                if payment.attemptsLeft == 0 { payment.status = 5 }
                state.payments[pmtReference] = payment
                return .failure(payment.attemptsLeft == 0 ? .otpInvalid : .otpMismatch(attemptsLeft: payment.attemptsLeft))
            }
            switch STCPaySandboxRules.outcome(forMobile: payment.mobile) {
            case .insufficientFunds:
                return .failure(.insufficientFunds)
            case .cancel:
                payment.status = 4
                state.payments[pmtReference] = payment
                return .failure(.cancelled)
            case .pay:
                payment.status = 2
                payment.paidAt = Date()
                payment.stcPayRefNum = state.nextReference()
                state.payments[pmtReference] = payment
                state.charges += 1
                return .success(payment)
            }
        }
        let payment = try result.get()
        return STCPayMessages.Confirm(STCPayRefNum: payment.stcPayRefNum ?? "", Amount: STCPayWire.amount(payment.halalas),
                                      PaymentDate: STCPayWire.timestamp(payment.paidAt ?? Date()), PaymentStatus: 2,
                                      PaymentStatusDesc: payment.statusDescription)
    }
}
