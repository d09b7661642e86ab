import GatewayAdapterSDK

/// An OPPWA result code, classified by HyperPay's documented patterns:
/// success `^(000\.000\.|000\.100\.1|000\.[36])`, success needing review
/// `^(000\.400\.0[^3]|000\.400\.100)`, pending `^(000\.200)`, pending for days
/// `^(800\.400\.5|100\.400\.500)`, and everything else a failure, whose code
/// is mapped to a problem of the unified vocabulary.
enum HyperPayResultClass: Equatable, Sendable {
    case success
    case review
    case pending
    case pendingForDays
    case failure

    init(_ code: String) {
        if Self.matches(code, ["000.000.", "000.100.1", "000.3", "000.6"]) {
            self = .success
        } else if code == "000.400.100" || (code.hasPrefix("000.400.0") && !code.hasPrefix("000.400.03")) {
            self = .review
        } else if code.hasPrefix("000.200") {
            self = .pending
        } else if Self.matches(code, ["800.400.5", "100.400.500"]) {
            self = .pendingForDays
        } else {
            self = .failure
        }
    }

    static func matches(_ code: String, _ prefixes: [String]) -> Bool { prefixes.contains { code.hasPrefix($0) } }

    /// The status and problem of a failed payment with `code`.
    static func failure(_ code: String, description: String) -> (PaymentStatus, AdapterProblem) {
        let said = "HyperPay \(code): \(description)"
        if code.hasPrefix("100.396.1") {
            return (.cancelled, AdapterProblem(code: .userCancelled, message: said, retryable: true, providerCode: code))
        }
        if ["800.100.155", "800.100.203"].contains(code) {
            return (.failed, AdapterProblem(code: .insufficientFunds, message: said, retryable: false, providerCode: code))
        }
        if code.hasPrefix("800.120.") {
            // Throttled: refused before processing, so nothing was charged.
            return (.failed, AdapterProblem(code: .providerError, message: said, retryable: true, safeToRetryElsewhere: true, providerCode: code))
        }
        if matches(code, ["100.380.4", "100.390.1", "000.400.1"]) {
            return (.failed, AdapterProblem(code: .authenticationFailed, message: said, retryable: false, providerCode: code))
        }
        if matches(code, ["600.", "200.", "700.", "800.900."]) {
            // The request or the merchant's set-up was refused (an entity not
            // configured for the brand, a bad parameter): nothing was processed.
            return (.failed, AdapterProblem(code: .providerError, message: said, retryable: false, safeToRetryElsewhere: true, providerCode: code))
        }
        if code == "900.100.300" {
            // "timeout, uncertain result": the acquirer may yet approve it.
            return (.pending, AdapterProblem(code: .providerError, message: said, retryable: true, providerCode: code))
        }
        if code.hasPrefix("900.") {
            return (.failed, AdapterProblem(code: .providerError, message: said, retryable: true, providerCode: code))
        }
        // 800.100.x bank declines, 100.100.x card data, 800.300.x blacklists, 800.400.x / 100.400.x risk checks, …
        return (.failed, AdapterProblem(code: .cardDeclined, message: said, retryable: false, providerCode: code))
    }
}
