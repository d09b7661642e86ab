/// An operation an adapter can be invoked with. The raw value is its name in
/// manifests and descriptions; ``code`` is its `gw_operation` number in the C ABI.
public enum PaymentOperation: String, Codable, Sendable, CaseIterable, Hashable {
    case authorize
    case `continue`
    case verify
    case capture
    case refund
    case void
    case webhook

    /// The `GW_OP_*` value of this operation.
    public var code: Int32 {
        switch self {
        case .authorize: 1
        case .continue: 2
        case .verify: 3
        case .capture: 4
        case .refund: 5
        case .void: 6
        case .webhook: 7
        }
    }

    /// The operation with the `GW_OP_*` value `code`, if ABI v1 knows it.
    public init?(code: Int32) {
        guard let op = PaymentOperation.allCases.first(where: { $0.code == code }) else { return nil }
        self = op
    }

    /// Whether the operation moves money or changes a payment (and so must carry an idempotency key).
    public var isMutating: Bool { self != .verify && self != .webhook }
}

/// The payment methods the product knows. Manifests may name others (third-party
/// methods); these are the ones the shipped adapters and the engine understand.
public enum KnownMethod: String, CaseIterable, Sendable {
    case visa, mastercard, mada, amex, applepay, googlepay, stcpay, tabby, tamara, swish
}
