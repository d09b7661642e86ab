import CGatewayABI
import GatewayPayloads

/// A `gw_status` from the C ABI, with its name.
public struct ABIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = ABIStatus(rawValue: 0)
    public static let invalidRequest = ABIStatus(rawValue: 1)
    public static let unsupported = ABIStatus(rawValue: 2)
    public static let version = ABIStatus(rawValue: 3)
    public static let `internal` = ABIStatus(rawValue: 4)
    public static let cancelled = ABIStatus(rawValue: 5)
    public static let timeout = ABIStatus(rawValue: 6)
    public static let busy = ABIStatus(rawValue: 7)
    public static let notFound = ABIStatus(rawValue: 8)
    public static let denied = ABIStatus(rawValue: 9)
    public static let outcomeUnknown = ABIStatus(rawValue: 10)
    public static let bufferTooSmall = ABIStatus(rawValue: 11)
    public static let unreachable = ABIStatus(rawValue: 12)

    public var description: String {
        let names = [
            "GW_OK", "GW_E_INVALID_REQUEST", "GW_E_UNSUPPORTED", "GW_E_VERSION", "GW_E_INTERNAL",
            "GW_E_CANCELLED", "GW_E_TIMEOUT", "GW_E_BUSY", "GW_E_NOT_FOUND", "GW_E_DENIED",
            "GW_E_OUTCOME_UNKNOWN", "GW_E_BUFFER_TOO_SMALL", "GW_E_UNREACHABLE",
        ]
        return rawValue >= 0 && Int(rawValue) < names.count ? names[Int(rawValue)] : "gw_status \(rawValue)"
    }

    /// Whether this status proves that nothing reached the provider: only the
    /// statuses the header documents so (`gw_status_proves_nothing_sent`, the
    /// one place that decides). Any other status, named or not, leaves the
    /// outcome unknown.
    public var provesNothingSent: Bool {
        gw_status_proves_nothing_sent(rawValue) != 0
    }
}

/// The bare number, as the Codable conformance of a `RawRepresentable` wrote
/// it (a runner's LOAD_FAILED: ``LoadFailure/negotiationFailed(status:)``,
/// ``LoadFailure/createFailed(status:message:)``).
extension ABIStatus: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.integer(Int64(rawValue))
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        self.init(rawValue: try HandshakeJSON.integer(&p, as: Int32.self))
    }
}
