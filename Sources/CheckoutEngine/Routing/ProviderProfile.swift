import Foundation
import GatewayPayloads
import PaymentFields

/// What routing knows of a provider: what its manifest claims, and whether it
/// is enabled. The engine never sees manifests or adapters; the host maps a
/// loaded manifest to one of these.
public struct ProviderProfile: Sendable, Equatable {
    public var id: String
    /// Test or live: it only ever serves sessions of the same mode.
    public var mode: PaymentMode
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
    /// Its manifest's `absence_window_s`: for this long after an attempt
    /// starts, a verify that finds nothing (`unknown_payment`) is not proof
    /// the provider will not act on it; the attempt stays pending.
    public var absenceWindow: TimeInterval = ProviderProfile.defaultAbsenceWindow
    /// 15 minutes, as a manifest's `absence_window_s` defaults.
    public static let defaultAbsenceWindow: TimeInterval = 900
    /// Whether it can list a session's payer instruments (ABI 1.1 `instruments`).
    public var supportsInstruments: Bool
    /// Its manifest's `fields`: the form of each method it declares one for (docs/fields.md).
    public var fields: [String: [Field]] { didSet { forms = Self.encoded(fields) } }
    /// Each method's form as JSON bytes, written once per manifests snapshot
    /// (this profile) and reused by every session that offers it.
    public private(set) var forms: [String: [UInt8]] = [:]
    /// Its manifest's `method_currencies`: a method offered in some of its
    /// currencies only (SEPA Direct Debit in EUR); a method not named here
    /// is offered in every currency of the provider.
    public var methodCurrencies: [String: Set<String>]

    public init(id: String, mode: PaymentMode = .test, enabled: Bool = true, priority: Int, methods: Set<String>, currencies: Set<String>,
                countries: Set<String>, limits: [String: ClosedRange<Int64>] = [:], supportsManualCapture: Bool = true,
                callTimeout: Duration = .seconds(30), supportsInstruments: Bool = false, fields: [String: [Field]] = [:],
                methodCurrencies: [String: Set<String>] = [:]) {
        self.fields = fields
        self.forms = Self.encoded(fields)
        self.methodCurrencies = methodCurrencies
        self.callTimeout = callTimeout
        self.supportsInstruments = supportsInstruments
        self.id = id
        self.mode = mode
        self.enabled = enabled
        self.priority = priority
        self.methods = methods
        self.currencies = currencies
        self.countries = countries
        self.limits = limits
        self.supportsManualCapture = supportsManualCapture
    }

    static func encoded(_ fields: [String: [Field]]) -> [String: [UInt8]] {
        fields.mapValues { Field.formJSON($0) }
    }

    public static func == (a: ProviderProfile, b: ProviderProfile) -> Bool {
        (a.id, a.mode, a.enabled, a.priority) == (b.id, b.mode, b.enabled, b.priority)
            && (a.methods, a.currencies, a.countries) == (b.methods, b.currencies, b.countries) && a.limits == b.limits && a.supportsManualCapture == b.supportsManualCapture && a.callTimeout == b.callTimeout
            && a.absenceWindow == b.absenceWindow && a.supportsInstruments == b.supportsInstruments && a.fields == b.fields
            && a.methodCurrencies == b.methodCurrencies
    }

    /// Why this provider cannot take the payment, or nil when it can.
    /// `mode`: the session's; a provider of the other mode never takes it
    /// (nil only where a caller looks at a profile outside any session).
    public func refusal(method: String, amount: Money, country: String?, capture: CaptureMode, mode: PaymentMode? = nil) -> String? {
        if !enabled { return "disabled" }
        if let mode, mode != self.mode { return "a \(self.mode.rawValue) provider never serves a \(mode.rawValue) session" }
        if !methods.contains(method) { return "does not offer \(method)" }
        if let only = methodCurrencies[method], !only.contains(amount.currency) {
            return "offers \(method) only in \(only.sorted().joined(separator: ", "))"
        }
        return refusal(amount: amount, country: country, capture: capture, mode: mode)
    }

    /// Whether it offers `method` in `currency` (its methods, narrowed by `methodCurrencies`).
    public func offers(_ method: String, in currency: String) -> Bool {
        methods.contains(method) && (methodCurrencies[method]?.contains(currency) ?? true)
    }

    /// The methods it offers in `currency`.
    public func methods(in currency: String) -> Set<String> {
        methods.filter { offers($0, in: currency) }
    }

    /// Why this provider cannot take the payment with any of its methods, or
    /// nil when it can take it with each of them.
    public func refusal(amount: Money, country: String?, capture: CaptureMode, mode: PaymentMode? = nil) -> String? {
        if !enabled { return "disabled" }
        if let mode, mode != self.mode { return "a \(self.mode.rawValue) provider never serves a \(mode.rawValue) session" }
        if !currencies.contains(amount.currency) { return "does not take \(amount.currency)" }
        if let country, !countries.contains(country) { return "does not serve \(country)" }
        if let range = limits[amount.currency], !range.contains(amount.value) {
            return "\(amount.value) is outside its \(amount.currency) limits \(range.lowerBound)...\(range.upperBound)"
        }
        if capture == .manual, !supportsManualCapture { return "cannot capture later" }
        return nil
    }
}
