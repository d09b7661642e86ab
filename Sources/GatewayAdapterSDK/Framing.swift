import CGatewayABI
import Foundation

/// Request documents to typed calls.
enum RequestDecoding {
    static func decode(_ operation: PaymentOperation, _ payload: Data) throws -> AdapterCall {
        let decoder = JSONDecoder()
        switch operation {
        case .authorize: return .authorize(try decoder.decode(AuthorizeRequest.self, from: payload))
        case .continue: return .continue(try decoder.decode(ContinueRequest.self, from: payload))
        case .verify: return .verify(try decoder.decode(VerifyRequest.self, from: payload))
        case .capture: return .capture(try decoder.decode(AmountRequest.self, from: payload))
        case .refund: return .refund(try decoder.decode(AmountRequest.self, from: payload))
        case .void: return .void(try decoder.decode(VoidRequest.self, from: payload))
        case .webhook: return .webhook(try decoder.decode(WebhookRequest.self, from: payload))
        }
    }
}

/// Replies and errors to completion documents.
enum ReplyEncoding {
    static func encode(_ reply: AdapterReply) throws -> Data {
        switch reply {
        case .payment(let result): try JSONEncoder().encode(result)
        case .webhook(let result): try JSONEncoder().encode(result)
        }
    }

    /// The status and error document for `error`; `sent` tells whether the call
    /// had reached the network, in which case an unexpected error leaves the
    /// outcome unknown rather than "nothing happened".
    static func failure(_ error: Error, sent: Bool) -> (Int32, Data) {
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
        return (status, (try? JSONEncoder().encode(ErrorDocument(message: message))) ?? Data())
    }
}
