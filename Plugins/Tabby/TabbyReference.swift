import GatewayAdapterSDK

/// What the adapter keeps in `providerReference`: `<region>:<capture
/// mode>:<payment id>` (`ai:automatic:7c1e…`). The region sends later calls
/// to the host that knows the payment; the capture mode tells continue and
/// verify whether an AUTHORIZED payment is to be captured at once (only
/// authorize is told).
struct TabbyReference: Sendable, Equatable {
    var region: TabbyRegion
    var capture: CaptureMode
    var paymentId: String

    init(region: TabbyRegion, capture: CaptureMode, paymentId: String) {
        self.region = region
        self.capture = capture
        self.paymentId = paymentId
    }

    /// Reads a reference this adapter wrote; refuses anything else.
    init(_ text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let region = TabbyRegion(rawValue: parts[0]), let capture = CaptureMode(rawValue: parts[1]),
              Self.isIdentifier(parts[2]) else {
            throw AdapterError.invalidRequest("providerReference \"\(text.prefix(100))\" is not a Tabby reference (<sa|ai>:<automatic|manual>:<payment id>)")
        }
        self.init(region: region, capture: capture, paymentId: parts[2])
    }

    var text: String { "\(region.rawValue):\(capture.rawValue):\(paymentId)" }

    /// Tabby's ids are UUIDs: letters, digits and `-` only.
    static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
    }
}
