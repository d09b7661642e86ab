import GatewayAdapterSDK

/// What the adapter hands the engine as `providerReference`: the checkout id,
/// prefixed with which entity it was prepared on (`mada:` or `card:`), since
/// every later query and back-office call must name that same entity.
/// The payment id itself is learnt from the status query when needed.
struct HyperPayReference: Sendable, Equatable {
    enum Kind: String, Sendable { case card, mada }
    var kind: Kind
    var checkoutId: String

    init(kind: Kind, checkoutId: String) {
        self.kind = kind
        self.checkoutId = checkoutId
    }

    /// Reads a reference this adapter wrote; refuses anything else.
    init(_ text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let kind = Kind(rawValue: String(parts[0])), !parts[1].isEmpty,
              parts[1].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }) else {
            throw AdapterError.invalidRequest("providerReference \"\(text.prefix(80))\" is not a HyperPay reference (card:<checkoutId> or mada:<checkoutId>)")
        }
        self.kind = kind
        checkoutId = String(parts[1])
    }

    var text: String { kind.rawValue + ":" + checkoutId }
}
