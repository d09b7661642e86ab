import CheckoutEngine

extension ProviderCall {
    /// The host's payment id the call is about, whatever the operation.
    public var paymentId: String {
        switch self {
        case .authorize(let r): r.paymentId
        case .proceed(let r): r.paymentId
        case .verify(let r): r.paymentId
        case .capture(let r), .refund(let r): r.paymentId
        case .void(let r): r.paymentId
        }
    }
}
