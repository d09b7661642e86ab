import PaymentFields
import CheckoutEngine
import GatewayPayloads
import PluginHost

extension ProviderReply {
    /// How an adapter call that produced no result reaches the engine. The
    /// header's rule decides (``AdapterCallError/outcomeUnknown``): only a
    /// status documented as "nothing was sent" is `notSent` (or, for an
    /// invalid request, `invalidRequest`); anything else is `unknown`.
    public init(failed error: AdapterCallError, operation: PaymentOperation) {
        let reason = Redaction.maskingCardNumbers(in: "\(operation.rawValue) \(error)")
        switch error {
        case _ where error.outcomeUnknown: self = .unknown(reason)
        case .refused(.invalidRequest, _), .failed(.invalidRequest, _): self = .invalidRequest(reason)
        default: self = .notSent(reason)
        }
    }
}
