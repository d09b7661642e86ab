import GatewayAdapterSDK

/// What the adapter hands the engine as `providerReference`:
/// `<capture mode>:<order_id>:<checkout_id>`. The capture mode is there
/// because continue and verify must know whether an approved order is to be
/// captured at once, and only authorize is told; the checkout id is what
/// voiding an abandoned checkout needs.
struct TamaraReference: Sendable, Equatable {
    var capture: CaptureMode
    var orderId: String
    var checkoutId: String

    init(capture: CaptureMode, orderId: String, checkoutId: String) {
        self.capture = capture
        self.orderId = orderId
        self.checkoutId = checkoutId
    }

    /// Reads a reference this adapter wrote; refuses anything else.
    init(_ text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let capture = CaptureMode(rawValue: parts[0]),
              Self.isIdentifier(parts[1]), Self.isIdentifier(parts[2]) else {
            throw AdapterError.invalidRequest("providerReference \"\(text.prefix(100))\" is not a Tamara reference (<automatic|manual>:<order_id>:<checkout_id>)")
        }
        self.init(capture: capture, orderId: parts[1], checkoutId: parts[2])
    }

    var text: String { "\(capture.rawValue):\(orderId):\(checkoutId)" }

    /// The checkout id of an order found by its reference after the
    /// checkout's answer was lost (Tamara's order documents do not carry it).
    static let foundByReference = "by-reference"

    /// Tamara's ids are UUIDs; letters, digits and `-` only.
    static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
    }
}
