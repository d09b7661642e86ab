import CGatewayABI
import Foundation

/// Request documents to typed calls.
enum RequestDecoding {
    static func decode(_ operation: PaymentOperation, _ payload: UnsafeRawBufferPointer) throws(JSONParseError) -> AdapterCall {
        switch operation {
        case .authorize: .authorize(try AuthorizeRequest(jsonBytes: payload))
        case .continue: .continue(try ContinueRequest(jsonBytes: payload))
        case .verify: .verify(try VerifyRequest(jsonBytes: payload))
        case .capture: .capture(try AmountRequest(jsonBytes: payload))
        case .refund: .refund(try AmountRequest(jsonBytes: payload))
        case .void: .void(try VoidRequest(jsonBytes: payload))
        case .webhook: .webhook(try WebhookRequest(jsonBytes: payload))
        }
    }
}

/// Replies and errors to completion documents.
enum ReplyEncoding {
    static func encode(_ reply: AdapterReply) -> [UInt8] {
        switch reply {
        case .payment(let result): result.jsonBytes()
        case .webhook(let result): result.jsonBytes()
        }
    }

    /// The status and error document for `error`; `requests` is how many HTTP
    /// requests the call had handed to the host: once one may have reached the
    /// provider, an unexpected error leaves the outcome unknown rather than
    /// "nothing happened", and so does an egress refusal of a later request.
    static func failure(_ error: Error, requests: Int) -> (Int32, [UInt8]) {
        let sent = requests > 0
        let (status, message): (Int32, String) = switch error {
        case AdapterError.invalidRequest(let m): (GW_E_INVALID_REQUEST, m)
        case AdapterError.unsupported(let m): (GW_E_UNSUPPORTED, m)
        case AdapterError.invalidConfiguration(let m): (GW_E_INTERNAL, m)
        case AdapterError.outcomeUnknown(let m): (GW_E_OUTCOME_UNKNOWN, m)
        case AdapterError.internal(let m): (sent ? GW_E_OUTCOME_UNKNOWN : GW_E_INTERNAL, m)
        case is CancellationError: (GW_E_CANCELLED, "cancelled")
        case let egress as HTTPEgressError:
            // DENIED / UNREACHABLE mean "this request was not sent"; only for the
            // call's first request does that mean nothing reached the provider.
            (requests <= 1 || egress.status == GW_E_OUTCOME_UNKNOWN || egress.status == GW_E_TIMEOUT ? egress.status : GW_E_OUTCOME_UNKNOWN, egress.message)
        default: (sent ? GW_E_OUTCOME_UNKNOWN : GW_E_INTERNAL, "unexpected \(type(of: error))")
        }
        return (status, ErrorDocument(message: message).jsonBytes())
    }
}
