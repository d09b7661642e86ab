import CGatewayABI
import Foundation

/// Request documents to typed calls.
enum RequestDecoding {
    /// The call, or nil when the payload is not its operation's request (or
    /// the operation is not a payment call).
    static func decode(_ operation: PaymentOperation, _ payload: UnsafeRawBufferPointer) -> AdapterCall? {
        try? decodeThrowing(operation, payload)
    }

    private static func decodeThrowing(_ operation: PaymentOperation, _ payload: UnsafeRawBufferPointer) throws(JSONParseError) -> AdapterCall? {
        switch operation {
        case .authorize: .authorize(try AuthorizeRequest(jsonBytes: payload))
        case .continue: .continue(try ContinueRequest(jsonBytes: payload))
        case .verify: .verify(try VerifyRequest(jsonBytes: payload))
        case .capture: .capture(try AmountRequest(jsonBytes: payload))
        case .refund: .refund(try AmountRequest(jsonBytes: payload))
        case .void: .void(try VoidRequest(jsonBytes: payload))
        case .webhook: .webhook(try WebhookRequest(jsonBytes: payload))
        case .instruments: nil
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
    /// requests the call had handed to the host. Once one may have reached
    /// the provider, nothing is reported as "not sent" (the header's rule,
    /// `gw_status_proves_nothing_sent`): an invalid request, an unexpected
    /// error or an egress refusal of a later request all complete with
    /// `GW_E_OUTCOME_UNKNOWN`. Only the call's first request refused by
    /// egress (denied, unreachable: it did not leave) keeps its status, and
    /// a provider's refusal of a reused idempotency key
    /// (``AdapterError/idempotencyConflict(_:)``) is `GW_E_INVALID_REQUEST`.
    static func failure(_ error: Error, requests: Int) -> (Int32, [UInt8]) {
        if case AdapterError.idempotencyConflict(let message) = error {
            return (GW_E_INVALID_REQUEST, ErrorDocument(message: message).jsonBytes())
        }
        let (named, message): (Int32, String) = switch error {
        case AdapterError.invalidRequest(let m): (GW_E_INVALID_REQUEST, m)
        case AdapterError.unsupported(let m): (GW_E_UNSUPPORTED, m)
        case AdapterError.invalidConfiguration(let m): (GW_E_INTERNAL, m)
        case AdapterError.outcomeUnknown(let m): (GW_E_OUTCOME_UNKNOWN, m)
        case AdapterError.internal(let m): (GW_E_INTERNAL, m)
        case AdapterError.idempotencyConflict(let m): (GW_E_INVALID_REQUEST, m)
        case let missing as SecretUnavailable: (GW_E_NOT_FOUND, missing.message)
        case is CancellationError: (GW_E_CANCELLED, "cancelled")
        case let egress as HTTPEgressError: (egress.status, egress.message)
        default: (GW_E_INTERNAL, "unexpected \(type(of: error))")
        }
        let firstRequestDidNotLeave = requests == 1 && (error as? HTTPEgressError).map { $0.status == GW_E_DENIED || $0.status == GW_E_UNREACHABLE } == true
        let mayHaveLeft = requests > 1 || (requests == 1 && !firstRequestDidNotLeave)
        let status = mayHaveLeft && gw_status_proves_nothing_sent(named) != 0 ? GW_E_OUTCOME_UNKNOWN : named
        return (status, ErrorDocument(message: message).jsonBytes())
    }
}
