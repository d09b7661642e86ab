import GatewayPayloads

/// What routing knows of a provider: what its manifest claims, and whether it
/// is enabled. The engine never sees manifests or adapters; the host maps a
/// loaded manifest to one of these.
public struct ProviderProfile: Sendable, Equatable {
    public var id: String
    public var enabled: Bool
    /// Lower is tried first.
    public var priority: Int
    public var methods: Set<String>
    public var currencies: Set<String>
    public var countries: Set<String>
    /// Inclusive limits in minor units, per currency.
    public var limits: [String: ClosedRange<Int64>]
    /// Whether the adapter can capture later (manual capture needs `capture`).
    public var supportsManualCapture: Bool
    /// The longest a call to it can take (its manifest's `timeout_ms`): an
    /// attempt in flight is owned by its engine for this long (plus a margin).
    public var callTimeout: Duration

    public init(id: String, enabled: Bool = true, priority: Int, methods: Set<String>, currencies: Set<String>,
                countries: Set<String>, limits: [String: ClosedRange<Int64>] = [:], supportsManualCapture: Bool = true,
                callTimeout: Duration = .seconds(30)) {
        self.callTimeout = callTimeout
        self.id = id
        self.enabled = enabled
        self.priority = priority
        self.methods = methods
        self.currencies = currencies
        self.countries = countries
        self.limits = limits
        self.supportsManualCapture = supportsManualCapture
    }

    /// Why this provider cannot take the payment, or nil when it can.
    public func refusal(method: String, amount: Money, country: String?, capture: CaptureMode) -> String? {
        if !enabled { return "disabled" }
        if !methods.contains(method) { return "does not offer \(method)" }
        return refusal(amount: amount, country: country, capture: capture)
    }

    /// Why this provider cannot take the payment with any of its methods, or
    /// nil when it can take it with each of them.
    public func refusal(amount: Money, country: String?, capture: CaptureMode) -> String? {
        if !enabled { return "disabled" }
        if !currencies.contains(amount.currency) { return "does not take \(amount.currency)" }
        if let country, !countries.contains(country) { return "does not serve \(country)" }
        if let range = limits[amount.currency], !range.contains(amount.value) {
            return "\(amount.value) is outside its \(amount.currency) limits \(range.lowerBound)...\(range.upperBound)"
        }
        if capture == .manual, !supportsManualCapture { return "cannot capture later" }
        return nil
    }
}
