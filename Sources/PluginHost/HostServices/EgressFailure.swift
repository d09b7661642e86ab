import Foundation

/// Why an egress request was not answered with a response: the `gw_status`
/// the adapter's callback gets, and a message for it and the log.
public struct EgressFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The raw `gw_status`.
    public var status: Int32
    public var message: String

    public init(_ status: ABIStatus, _ message: String) {
        self.status = status.rawValue
        self.message = message
    }

    public var abiStatus: ABIStatus { ABIStatus(rawValue: status) }
    public var description: String { "\(abiStatus): \(message)" }
}
