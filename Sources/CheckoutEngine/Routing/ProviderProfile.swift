import Foundation
import GatewayPayloads
import PaymentFields

/// What routing knows of a provider: what its manifest claims, and whether it
/// is enabled. The engine never sees manifests or adapters; the host maps a
/// loaded manifest to one of these.
public struct ProviderProfile: Sendable, Equatable {
    /// Every member, in one box shared by copies until one is changed. A
    /// profile is copied on every route, offer and attempt (out of the
    /// snapshot's array), and it has a dozen reference-counted members: as a
    /// plain struct each copy retained and released all of them (2% of a
    /// durable payment's CPU in a profile), where a copy of the box is one.
    private final class Storage: @unchecked Sendable {
        // Safe to send: a box is changed only when `unique()` found it held
        // by one profile alone, so no other thread can be reading it.
        var id: String
        var mode: PaymentMode
        var enabled: Bool
        var priority: Int
        var methods: Set<String>
        var currencies: Set<String>
        var countries: Set<String>
        var limits: [String: ClosedRange<Int64>]
        var supportsManualCapture: Bool
        var callTimeout: Duration
        var absenceWindow: TimeInterval
        var supportsInstruments: Bool
        var fields: [String: [Field]]
        var forms: [String: [UInt8]]
        var methodCurrencies: [String: Set<String>]

        init(id: String, mode: PaymentMode, enabled: Bool, priority: Int, methods: Set<String>, currencies: Set<String>,
             countries: Set<String>, limits: [String: ClosedRange<Int64>], supportsManualCapture: Bool, callTimeout: Duration,
             absenceWindow: TimeInterval, supportsInstruments: Bool, fields: [String: [Field]], forms: [String: [UInt8]],
             methodCurrencies: [String: Set<String>]) {
            self.id = id
            self.mode = mode
            self.enabled = enabled
            self.priority = priority
            self.methods = methods
            self.currencies = currencies
            self.countries = countries
            self.limits = limits
            self.supportsManualCapture = supportsManualCapture
            self.callTimeout = callTimeout
            self.absenceWindow = absenceWindow
            self.supportsInstruments = supportsInstruments
            self.fields = fields
            self.forms = forms
            self.methodCurrencies = methodCurrencies
        }

        func copy() -> Storage {
            Storage(id: id, mode: mode, enabled: enabled, priority: priority, methods: methods, currencies: currencies,
                    countries: countries, limits: limits, supportsManualCapture: supportsManualCapture, callTimeout: callTimeout,
                    absenceWindow: absenceWindow, supportsInstruments: supportsInstruments, fields: fields, forms: forms,
                    methodCurrencies: methodCurrencies)
        }
    }

    private var storage: Storage

    /// Which storage this profile reads: the same for its unchanged copies,
    /// another once one of several sharing it is changed. A profile that
    /// holds its storage alone is changed in place and keeps its identity:
    /// equal identities mean equal profiles only to a holder of a copy (as
    /// ``OfferCache`` is), whose copy makes any change go to a new storage.
    public var identity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The box, made this profile's own first if it is shared.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    public var id: String {
        get { storage.id }
        set { unique().id = newValue }
    }
    /// Test or live: it only ever serves sessions of the same mode.
    public var mode: PaymentMode {
        get { storage.mode }
        set { unique().mode = newValue }
    }
    public var enabled: Bool {
        get { storage.enabled }
        set { unique().enabled = newValue }
    }
    /// Lower is tried first.
    public var priority: Int {
        get { storage.priority }
        set { unique().priority = newValue }
    }
    public var methods: Set<String> {
        get { storage.methods }
        set { unique().methods = newValue }
    }
    public var currencies: Set<String> {
        get { storage.currencies }
        set { unique().currencies = newValue }
    }
    public var countries: Set<String> {
        get { storage.countries }
        set { unique().countries = newValue }
    }
    /// Inclusive limits in minor units, per currency.
    public var limits: [String: ClosedRange<Int64>] {
        get { storage.limits }
        set { unique().limits = newValue }
    }
    /// Whether the adapter can capture later (manual capture needs `capture`).
    public var supportsManualCapture: Bool {
        get { storage.supportsManualCapture }
        set { unique().supportsManualCapture = newValue }
    }
    /// The longest a call to it can take (its manifest's `timeout_ms`): an
    /// attempt in flight is owned by its engine for this long (plus a margin).
    public var callTimeout: Duration {
        get { storage.callTimeout }
        set { unique().callTimeout = newValue }
    }
    /// Its manifest's `absence_window_s`: for this long after an attempt
    /// starts, a verify that finds nothing (`unknown_payment`) is not proof
    /// the provider will not act on it; the attempt stays pending.
    public var absenceWindow: TimeInterval {
        get { storage.absenceWindow }
        set { unique().absenceWindow = newValue }
    }
    /// 15 minutes, as a manifest's `absence_window_s` defaults.
    public static let defaultAbsenceWindow: TimeInterval = 900
    /// Whether it can list a session's payer instruments (ABI 1.1 `instruments`).
    public var supportsInstruments: Bool {
        get { storage.supportsInstruments }
        set { unique().supportsInstruments = newValue }
    }
    /// Its manifest's `fields`: the form of each method it declares one for (docs/fields.md).
    public var fields: [String: [Field]] {
        get { storage.fields }
        set {
            let box = unique()
            box.fields = newValue
            box.forms = Self.encoded(newValue)
        }
    }
    /// Each method's form as JSON bytes, written once per manifests snapshot
    /// (this profile) and reused by every session that offers it.
    public var forms: [String: [UInt8]] { storage.forms }
    /// Its manifest's `method_currencies`: a method offered in some of its
    /// currencies only (SEPA Direct Debit in EUR); a method not named here
    /// is offered in every currency of the provider.
    public var methodCurrencies: [String: Set<String>] {
        get { storage.methodCurrencies }
        set { unique().methodCurrencies = newValue }
    }

    public init(id: String, mode: PaymentMode = .test, enabled: Bool = true, priority: Int, methods: Set<String>, currencies: Set<String>,
                countries: Set<String>, limits: [String: ClosedRange<Int64>] = [:], supportsManualCapture: Bool = true,
                callTimeout: Duration = .seconds(30), supportsInstruments: Bool = false, fields: [String: [Field]] = [:],
                methodCurrencies: [String: Set<String>] = [:]) {
        storage = Storage(id: id, mode: mode, enabled: enabled, priority: priority, methods: methods, currencies: currencies,
                          countries: countries, limits: limits, supportsManualCapture: supportsManualCapture, callTimeout: callTimeout,
                          absenceWindow: Self.defaultAbsenceWindow, supportsInstruments: supportsInstruments, fields: fields,
                          forms: Self.encoded(fields), methodCurrencies: methodCurrencies)
    }

    static func encoded(_ fields: [String: [Field]]) -> [String: [UInt8]] {
        fields.mapValues { Field.formJSON($0) }
    }

    public static func == (a: ProviderProfile, b: ProviderProfile) -> Bool {
        if a.storage === b.storage { return true }
        return (a.id, a.mode, a.enabled, a.priority) == (b.id, b.mode, b.enabled, b.priority)
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
