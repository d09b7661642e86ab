import Foundation
import GatewayAdapterSDK

/// What the adapter keeps in `providerReference`:
/// `stcpay:<OtpReference>:<STCPayPmtReference>:<expiry, unix seconds>:<sandbox OTP or empty>`.
/// Both of STC Pay's references are needed to confirm; the expiry lets a
/// wrong OTP answer the same `otp` action. The sandbox OTP is only ever
/// present when the adapter runs against the simulator (config `sandbox`).
/// The payment's `RefNum` is the host's payment id, which every call carries.
struct STCPayReference: Sendable, Equatable {
    var otpReference: String
    var pmtReference: String
    var expiresAt: Int64
    var sandboxOtp: String?

    init(otpReference: String, pmtReference: String, expiresAt: Int64, sandboxOtp: String?) {
        self.otpReference = otpReference
        self.pmtReference = pmtReference
        self.expiresAt = expiresAt
        self.sandboxOtp = sandboxOtp
    }

    /// Reads a reference this adapter wrote; refuses anything else.
    init(_ text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "stcpay", Self.isToken(parts[1]), Self.isToken(parts[2]), let expiry = Int64(parts[3]),
              parts[4].isEmpty || parts[4].allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw AdapterError.invalidRequest("providerReference \"\(text.prefix(100))\" is not an STC Pay reference (stcpay:<OtpReference>:<STCPayPmtReference>:<expiry>:<otp>)")
        }
        self.init(otpReference: parts[1], pmtReference: parts[2], expiresAt: expiry, sandboxOtp: parts[4].isEmpty ? nil : parts[4])
    }

    var text: String { "stcpay:\(otpReference):\(pmtReference):\(expiresAt):\(sandboxOtp ?? "")" }

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
