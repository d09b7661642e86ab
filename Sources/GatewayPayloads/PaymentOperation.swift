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
    /// ABI 1.1: what the session's payer can use (saved cards, a known phone
    /// number, wallets, web-based instruments, client sessions). Moves no money.
    case instruments

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
        case .instruments: 8
        }
    }

    /// The ABI minor version that introduced the operation: a host asks an
    /// adapter for it only when both sides negotiated at least this minor.
    public var introducedInMinor: UInt32 { self == .instruments ? 1 : 0 }

    /// The operations of ABI 1.0, which move or read a payment: what a
    /// payment adapter describes unless it also lists payer instruments.
    public static let paymentOperations: [PaymentOperation] = [.authorize, .continue, .verify, .capture, .refund, .void, .webhook]

    /// The operation with the `GW_OP_*` value `code`, if this ABI minor knows it.
    public init?(code: Int32) {
        guard let op = PaymentOperation.allCases.first(where: { $0.code == code }) else { return nil }
        self = op
    }

    /// Whether the operation moves money or changes a payment (and so must carry an idempotency key).
    public var isMutating: Bool { self != .verify && self != .webhook && self != .instruments }
}

/// The payment methods the product knows. Manifests may name others (third-party
/// methods); these are the ones the shipped adapters and the engine understand.
public enum KnownMethod: String, CaseIterable, Sendable {
    case visa, mastercard, mada, amex, applepay, googlepay, stcpay, tabby, tamara, swish
    /// SEPA Direct Debit (EUR): an IBAN, the account holder, the mandate.
    case sepaDebit = "sepa_debit"
}
