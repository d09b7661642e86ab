import PaymentFields
import Foundation

/// Makes egress traffic fit for a debug log: card numbers masked, this
/// adapter's secret values replaced, secret-bearing headers hidden, long
/// bodies cut (after masking, so a cut never exposes part of a number).
struct EgressLogMasking: Sendable {
    static let mask = "****"
    /// Longest body text kept in one log line.
    static let bodyLimit = 2_048
    /// Secret values shorter than this are not searched for (they would mask
    /// ordinary text); a secret worth the name is longer.
    static let shortestMaskedSecret = 4

    /// The adapter's secret values, longest first.
    let secretValues: [String]

    init(secretValues: [String]) {
        self.secretValues = secretValues.filter { $0.utf8.count >= Self.shortestMaskedSecret }.sorted { $0.count > $1.count }
    }

    /// Whether a header's value is secret by its name alone.
    static func isSecretHeader(_ name: String) -> Bool {
        let name = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(name) { return true }
        return ["token", "secret", "key", "signature", "auth", "password"].contains { name.contains($0) }
    }

    /// `text` with secret values, card numbers and the values of
    /// security-code, PIN, password and one-time-password fields masked.
    func text(_ text: String) -> String {
        var out = text
        for secret in secretValues { out = out.replacingOccurrences(of: secret, with: Self.mask) }
        return Self.maskingSensitiveFields(in: Redaction.maskingCardNumbers(in: out))
    }

    /// Field names whose value is never logged, whatever it looks like: a CVV
    /// or an OTP is too short to be recognised by its shape; Worldline's
    /// `encryptedCustomerInput` is a card sealed for the provider, kept out of logs all the same.
    static let sensitiveFieldPattern = "cvv2?|cvc2?|cvn|csc|security_?code|pin|password|passwd|otp|otp_?value|one_?time_?password|encrypted_?customer_?input"

    /// JSON members (`"cvv": "123"`, `"OtpValue": 1234`) and form fields
    /// (`card.cvv=123`) named like a sensitive field (any prefix up to a dot,
    /// case-insensitive), with their values masked.
    private static let sensitiveFields: [(expression: NSRegularExpression, template: String)] = {
        let name = "(?:[A-Za-z0-9_]*\\.)?(?i:\(sensitiveFieldPattern))"
        return [
            (try! NSRegularExpression(pattern: "(\"\(name)\"\\s*:\\s*)(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}\\s]+)"), "$1\"\(mask)\""),
            (try! NSRegularExpression(pattern: "((?:^|[&?])\(name)=)([^&\\s]*)"), "$1\(mask)"),
        ]
    }()

    static func maskingSensitiveFields(in text: String) -> String {
        var out = text
        for field in sensitiveFields {
            out = field.expression.stringByReplacingMatches(
                in: out, range: NSRange(out.startIndex..., in: out), withTemplate: field.template)
        }
        return out
    }

    /// A body for the log: masked text, or its size when it is not UTF-8.
    func body(_ data: Data) -> String {
        if data.isEmpty { return "(empty)" }
        guard let string = String(data: data, encoding: .utf8) else { return "(\(data.count) bytes, not UTF-8)" }
        let masked = text(string)
        return masked.count > Self.bodyLimit ? String(masked.prefix(Self.bodyLimit)) + "… (\(data.count) bytes)" : masked
    }

    /// Headers for the log, secret-bearing ones masked.
    func headers(_ headers: [(name: String, value: String)]) -> String {
        let parts = headers.map { header in
            "\(header.name): \(Self.isSecretHeader(header.name) ? Self.mask : text(header.value))"
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
