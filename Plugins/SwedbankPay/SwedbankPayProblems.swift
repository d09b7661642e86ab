import GatewayAdapterSDK

/// Swedbank Pay's problem types, by the last segment of `type` (lower
/// case), as the host's problems: code, retryable, and whether the payer
/// may simply try again. The payer's English and Arabic messages come from
/// the host's catalogue by code.
enum SwedbankPayProblems {
    struct Mapping: Sendable, Equatable {
        var code: ProblemCode
        var status: PaymentStatus
        var retryable: Bool
        var field: String? = nil
    }

    static func mapping(of name: String) -> Mapping {
        switch name {
        case "3dsecuredeclined", "authenticationstatusrejected":
            Mapping(code: .authenticationFailed, status: .failed, retryable: false)
        case "3dsecurerequired", "authenticationrequired":
            Mapping(code: .authenticationFailed, status: .failed, retryable: true)
        case "3dsecureusercancelled", "3dsecureusercanceled", "usercancelled", "usercanceled", "bankidcancelled":
            Mapping(code: .userCancelled, status: .cancelled, retryable: true)
        case "frauddetected", "acquirerpossiblefraud":
            Mapping(code: .fraudDetected, status: .failed, retryable: false)
        case "acquirerinsufficientfunds":
            Mapping(code: .insufficientFunds, status: .failed, retryable: false)
        case "carddeclined", "acquirercardexpired", "acquirercardstolen", "cardblacklisted", "acquirercardblacklisted", "velocitycheck",
             "acquirererrordonotretry", "dailylimitexceeded", "monthlylimitexceeded":
            Mapping(code: .cardDeclined, status: .failed, retryable: false)
        case "paymenttokeninactive", "cardbranddisabled", "cardtyperejected", "accountholdertyperejected":
            Mapping(code: .methodUnavailable, status: .failed, retryable: false)
        case "clientapplaunchfailed":
            Mapping(code: .appLaunchFailed, status: .failed, retryable: true)
        case "swishdeclined":
            Mapping(code: .walletDeclined, status: .failed, retryable: false)
        case "swishtimeout":
            Mapping(code: .expired, status: .failed, retryable: false)
        case "inputerror":
            Mapping(code: .invalidPhoneNumber, status: .failed, retryable: true, field: "instrument.msisdn")
        case "swisherror", "swishgatewaytimeout", "bankiderror", "swishalreadyinuse", "bankidalreadyinuse", "3dsecureerror",
             "3dsecureacquirergatewayerror", "acquirererror", "acquirergatewayerror", "acquirergatewaytimeout", "badgateway",
             "internalservererror", "systemerror":
            Mapping(code: .providerError, status: .failed, retryable: true)
        default:
            Mapping(code: .paymentFailed, status: .failed, retryable: false)
        }
    }

    /// The result of an attempt that ended with `problem`: nothing was
    /// charged (the order is aborted before this is answered), so another
    /// provider may be tried unless the payer is the reason.
    static func result(_ problem: SwedbankPayWire.Problem, reference: String, instrument: String?) -> AdapterResult {
        let name = problem.name
        var mapping = mapping(of: name)
        // An input error is about the phone only on Swish.
        if name == "inputerror", instrument != "Swish" { mapping = Mapping(code: .paymentFailed, status: .failed, retryable: false) }
        return AdapterResult(status: mapping.status, providerReference: reference, problem: AdapterProblem(
            code: mapping.code, message: "Swedbank Pay: \(problem.title ?? name)" + (problem.detail.map { " (\($0))" } ?? "") + "; nothing was charged",
            retryable: mapping.retryable, safeToRetryElsewhere: false, providerCode: name, field: mapping.field), providerStatus: "Aborted")
    }
}
