import CheckoutEngine
import GatewayPayloads

// Tests write problem codes and event kinds as the strings they are on the
// wire (`"card_declined"`, `"payment.capture_sent"`), the way a merchant
// reads them. Only the tests can: the product's sources name each by its
// static member (`.cardDeclined`, `.captureSent`), so a typo there does not
// compile.
extension ProblemCode: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
}

extension SessionEvent.Kind: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
}
