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

    /// The status and error document for `error`; `sent` tells whether the call
    /// had reached the network, in which case an unexpected error leaves the
    /// outcome unknown rather than "nothing happened".
    static func failure(_ error: Error, sent: Bool) -> (Int32, [UInt8]) {
        let (status, message): (Int32, String) = switch error {
        case AdapterError.invalidRequest(let m): (GW_E_INVALID_REQUEST, m)
        case AdapterError.unsupported(let m): (GW_E_UNSUPPORTED, m)
        case AdapterError.invalidConfiguration(let m): (GW_E_INTERNAL, m)
        case AdapterError.outcomeUnknown(let m): (GW_E_OUTCOME_UNKNOWN, m)
        case AdapterError.internal(let m): (sent ? GW_E_OUTCOME_UNKNOWN : GW_E_INTERNAL, m)
        case is CancellationError: (GW_E_CANCELLED, "cancelled")
        case let egress as HTTPEgressError: (egress.status, egress.message)
        default: (sent ? GW_E_OUTCOME_UNKNOWN : GW_E_INTERNAL, "unexpected \(type(of: error))")
        }
        return (status, ErrorDocument(message: message).jsonBytes())
    }
}
