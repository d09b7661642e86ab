import Foundation
import GatewayAdapterSDK

/// A Worldline payment as the host sees it, and Worldline's error codes as
/// the host's problems. One table each: the statuses and codes that rest on
/// unofficial sources (docs/providers.md says which) are only here.
enum WorldlineStatus {
    /// The host's result for `payment` (as a `GET` or a create answered it).
    static func result(_ payment: WorldlineWire.Payment, wasRedirected: Bool = false) -> AdapterResult {
        let id = payment.id
        let status = payment.status ?? ""
        let amount = payment.paymentOutput?.amountOfMoney.flatMap { money -> Money? in
            guard let value = money.amount, let currency = money.currencyCode else { return nil }
            return Money(value: value, currency: currency)
        }
        let totals = self.totals(payment)
        func with(_ status: PaymentStatus, _ problem: AdapterProblem? = nil) -> AdapterResult {
            AdapterResult(status: status, providerReference: id, amount: amount, problem: problem, providerStatus: payment.status, totals: totals)
        }
        switch status {
        case "CREATED", "REDIRECTED", "PENDING_PAYMENT", "AUTHORIZATION_REQUESTED", "PENDING_COMPLETION":
            return with(.pending)
        case "PENDING_CAPTURE", "PENDING_APPROVAL":
            return with(.authorized)
        case "CAPTURE_REQUESTED", "CAPTURED", "REFUND_REQUESTED", "REFUNDED":
            return with(.succeeded)
        case "REJECTED":
            let error = payment.statusOutput?.errors?.first
            let after3DS = wasRedirected || error?.errorCode == "30891001"
            return with(.failed, problem(code: error?.errorCode, id: error?.id, authentication: after3DS))
        case "REJECTED_CAPTURE":
            return with(.failed, AdapterProblem(code: .providerError, message: "Worldline rejected the capture of this payment", retryable: false,
                                                providerCode: payment.statusOutput?.errors?.first?.errorCode ?? "REJECTED_CAPTURE"))
        case "CANCELLED":
            if payment.statusOutput?.statusCode == 1 || payment.statusOutput?.errors?.first?.errorCode == "30171001" {
                return with(.cancelled, AdapterProblem(code: .userCancelled, message: "Worldline: the payer cancelled", retryable: true,
                                                       providerCode: "30171001"))
            }
            return with(.cancelled, AdapterProblem(code: .voided, message: "Worldline: the payment was cancelled", retryable: false))
        default:
            return with(.pending, AdapterProblem(code: .providerError, message: "Worldline reported a status this adapter does not know: \(status.prefix(40))",
                                                 retryable: true))
        }
    }

    /// What was captured and refunded, from `/details`'s operations.
    static func totals(_ payment: WorldlineWire.Payment) -> PaymentTotals? {
        guard let operations = payment.operations, let currency = payment.paymentOutput?.amountOfMoney?.currencyCode else { return nil }
        func sum(_ statuses: Set<String>) -> Int64 {
            operations.filter { statuses.contains($0.status ?? "") }.reduce(0) { $0 + ($1.amountOfMoney?.amount ?? 0) }
        }
        return PaymentTotals(captured: Money(value: sum(["CAPTURED", "CAPTURE_REQUESTED"]), currency: currency),
                             refunded: Money(value: sum(["REFUNDED", "REFUND_REQUESTED"]), currency: currency),
                             voided: payment.status == "CANCELLED" && payment.statusOutput?.statusCode != 1)
    }

    struct Mapping: Sendable, Equatable {
        var code: ProblemCode
        var retryable: Bool
        var field: String? = nil
    }

    /// Worldline's platform error codes (their public table; see docs/providers.md).
    static func mapping(errorCode: String?, id: String?) -> Mapping {
        switch errorCode ?? "" {
        case "30511001", "30611001": Mapping(code: .insufficientFunds, retryable: false)
        case "30331001", "30541001": Mapping(code: .cardExpired, retryable: false)
        case "30341001", "30341002", "30341003", "30341004", "30341005", "30591001": Mapping(code: .fraudDetected, retryable: false)
        case "30141001", "30551001", "31061001": Mapping(code: .invalidCardDetails, retryable: true, field: "instrument.encryptedCustomerInput")
        case "30891001", "40001134": Mapping(code: .authenticationFailed, retryable: false)
        case "30171001": Mapping(code: .userCancelled, retryable: true)
        case "30171002": Mapping(code: .expired, retryable: false)
        case "30961001": Mapping(code: .providerError, retryable: true)
        // Any other issuer or acquirer refusal (3xxxxxxx), and a rejection with no code.
        default: Mapping(code: .cardDeclined, retryable: false)
        }
    }

    /// The problem of a rejected payment: nothing was charged, and the payer
    /// (or the card) is the reason, so no other provider is tried for it.
    static func problem(code: String?, id: String?, authentication: Bool = false) -> AdapterProblem {
        var mapping = mapping(errorCode: code, id: id)
        if authentication, mapping.code == .cardDeclined { mapping = Mapping(code: .authenticationFailed, retryable: false) }
        return AdapterProblem(code: mapping.code, message: "Worldline rejected the payment (\(code ?? "no error code")\(id.map { " \($0)" } ?? "")); nothing was charged",
                              retryable: mapping.retryable, safeToRetryElsewhere: false, providerCode: code ?? id, field: mapping.field)
    }
}
