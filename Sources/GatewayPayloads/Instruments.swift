import Foundation

/// ABI 1.1: the payer's instruments (docs/payloads.md §5.8). The host asks an
/// adapter that lists `instruments` what the session's payer can use; the
/// adapter answers per method. Nothing here moves money.

/// `instruments`: what may the session's payer use?
public struct InstrumentsRequest: Sendable, Hashable {
    /// The host's session id (stable; for the provider's correlation only).
    public var sessionId: String
    public var mode: PaymentMode
    public var amount: Money
    /// ISO 3166-1 alpha-2.
    public var country: String?
    public var capture: CaptureMode
    /// This provider's methods that the session may use.
    public var methods: [String]
    /// Absent for an anonymous session: an adapter whose provider needs a
    /// known payer then answers `{"methods":{}}` without calling it.
    public var payer: Payer?

    public init(sessionId: String, mode: PaymentMode, amount: Money, country: String? = nil, capture: CaptureMode = .automatic,
                methods: [String], payer: Payer? = nil) {
        self.sessionId = sessionId
        self.mode = mode
        self.amount = amount
        self.country = country
        self.capture = capture
        self.methods = methods
        self.payer = payer
    }
}

/// One instrument a payer can use. `kind` says which members it carries:
///
/// - `saved_card`: `brand`, `last4`, `expiryMonth`, `expiryYear` (never a card number), `reference`;
/// - `phone`: `masked` (at most six digits shown), `reference` (the number);
/// - `wallet`: `available`;
/// - `web`: `label`, `mode` (`menu`, `restricted` with `reference`, or `instrument` with `reference`);
/// - `client_session`: `data` (public values a device SDK needs), `expiresAt`.
///
/// `reference` is the adapter's own handle, opaque to the host: it never
/// leaves the host in the clear, and comes back to the adapter in an
/// authorize's `instrument.selected`. Unknown kinds are skipped by the host.
public struct Instrument: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case savedCard = "saved_card"
        case phone
        case wallet
        case web
        case clientSession = "client_session"

        /// Whether a payer picks it by id (an attempt's `instrumentId`).
        public var isSelectable: Bool { self == .savedCard || self == .phone || self == .web }
    }

    /// One of ``Kind``'s raw values (kept as text: a later minor may add kinds).
    public var kind: String
    public var brand: String?
    public var last4: String?
    public var expiryMonth: Int?
    public var expiryYear: Int?
    public var masked: String?
    public var available: Bool?
    public var label: String?
    /// `web` only: `menu`, `restricted` or `instrument`.
    public var mode: String?
    public var data: [String: String]?
    public var reference: String?
    /// RFC 3339; the instrument is not offered after it.
    public var expiresAt: String?

    public init(kind: String, brand: String? = nil, last4: String? = nil, expiryMonth: Int? = nil, expiryYear: Int? = nil,
                masked: String? = nil, available: Bool? = nil, label: String? = nil, mode: String? = nil,
                data: [String: String]? = nil, reference: String? = nil, expiresAt: String? = nil) {
        self.kind = kind
        self.brand = brand
        self.last4 = last4
        self.expiryMonth = expiryMonth
        self.expiryYear = expiryYear
        self.masked = masked
        self.available = available
        self.label = label
        self.mode = mode
        self.data = data
        self.reference = reference
        self.expiresAt = expiresAt
    }

    public static func savedCard(brand: String, last4: String, expiryMonth: Int, expiryYear: Int, reference: String) -> Instrument {
        Instrument(kind: Kind.savedCard.rawValue, brand: brand, last4: last4, expiryMonth: expiryMonth, expiryYear: expiryYear, reference: reference)
    }

    public static func phone(masked: String, reference: String) -> Instrument {
        Instrument(kind: Kind.phone.rawValue, masked: masked, reference: reference)
    }

    public static func wallet(available: Bool) -> Instrument {
        Instrument(kind: Kind.wallet.rawValue, available: available)
    }

    public static func web(label: String, mode: String = "menu", reference: String? = nil) -> Instrument {
        Instrument(kind: Kind.web.rawValue, label: label, mode: mode, reference: reference)
    }

    public static func clientSession(data: [String: String], expiresAt: String) -> Instrument {
        Instrument(kind: Kind.clientSession.rawValue, data: data, expiresAt: expiresAt)
    }

    /// ``expiresAt`` as a date; nil when absent or not RFC 3339.
    public var expiryDate: Date? { expiresAt.flatMap(WireDate.parse) }

    /// This instrument with its `expiresAt` in the wire's one format (an
    /// adapter may write any RFC 3339 time: an offset, no milliseconds).
    public var withWireDates: Instrument {
        var copy = self
        if let date = expiryDate { copy.expiresAt = WireDate.string(date) }
        return copy
    }
}

/// The result of `instruments`: per method, what the payer can use.
public struct InstrumentsResult: Sendable, Hashable {
    public var methods: [String: [Instrument]]
    public init(methods: [String: [Instrument]] = [:]) { self.methods = methods }
}

/// What the payer picked, as an authorize's `instrument.selected` carries it
/// back to the adapter that offered it.
public struct SelectedInstrument: Sendable, Hashable {
    public var kind: String
    public var reference: String

    public init(kind: String, reference: String) {
        self.kind = kind
        self.reference = reference
    }

    /// The reserved member of an authorize's `instrument`.
    public static let member = "selected"

    public var jsonValue: JSONValue { .object(["kind": .string(kind), "reference": .string(reference)]) }

    /// The selection an authorize request carries, if any.
    public init?(in instrument: [String: JSONValue]?) {
        guard case .object(let members)? = instrument?[Self.member],
              case .string(let kind)? = members["kind"], case .string(let reference)? = members["reference"] else { return nil }
        self.init(kind: kind, reference: reference)
    }
}

extension InstrumentsRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("sessionId", sessionId)
        w.member("mode", mode.rawValue)
        w.member("amount", amount)
        w.member("country", country)
        w.member("capture", capture.rawValue)
        w.key("methods")
        w.beginArray()
        for method in methods { w.string(method) }
        w.endArray()
        w.member("payer", payer)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var sessionId: String?, mode: PaymentMode?, amount: Money?, country: String?, capture: CaptureMode?
        var methods: [String]?, payer: Payer?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "sessionId": sessionId = try p.string()
            case "mode":
                let raw = try p.string()
                guard let value = PaymentMode(rawValue: raw) else { throw p.error("mode must be \"test\" or \"live\"") }
                mode = value
            case "amount": amount = try Money(parsing: &p)
            case "country": country = try p.optionalString()
            case "capture":
                let raw = try p.string()
                guard let value = CaptureMode(rawValue: raw) else { throw p.error("capture must be \"automatic\" or \"manual\"") }
                capture = value
            case "methods":
                var list: [String] = []
                try p.array { p throws(JSONParseError) in list.append(try p.string()) }
                methods = list
            case "payer": payer = try p.nested(Payer.self)
            default: try p.skipValue()
            }
        }
        self.init(
            sessionId: try required(sessionId, "sessionId", p), mode: try required(mode, "mode", p), amount: try required(amount, "amount", p),
            country: country, capture: try required(capture, "capture", p), methods: try required(methods, "methods", p), payer: payer)
    }
}

extension Instrument: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("kind", kind)
        writeDisplayMembers(to: &w)
        w.member("reference", reference)
        w.endObject()
    }

    /// The members a payer may be shown (all but `kind` and `reference`),
    /// into an object the caller has begun.
    public func writeDisplayMembers(to w: inout JSONWriter) {
        w.member("brand", brand)
        w.member("last4", last4)
        w.member("expiryMonth", expiryMonth)
        w.member("expiryYear", expiryYear)
        w.member("masked", masked)
        if let available { w.member("available", available) }
        w.member("label", label)
        w.member("mode", mode)
        w.member("data", data)
        w.member("expiresAt", expiresAt)
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var kind: String?
        var this = Instrument(kind: "")
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "kind": kind = try p.string()
            case "brand": this.brand = try p.optionalString()
            case "last4": this.last4 = try p.optionalString()
            case "expiryMonth": this.expiryMonth = p.takeNull() ? nil : Int(try p.integer())
            case "expiryYear": this.expiryYear = p.takeNull() ? nil : Int(try p.integer())
            case "masked": this.masked = try p.optionalString()
            case "available": this.available = p.takeNull() ? nil : try p.bool()
            case "label": this.label = try p.optionalString()
            case "mode": this.mode = try p.optionalString()
            case "data": this.data = try p.stringMap()
            case "reference": this.reference = try p.optionalString()
            case "expiresAt": this.expiresAt = try p.optionalString()
            default: try p.skipValue()
            }
        }
        this.kind = try required(kind, "kind", p)
        self = this
    }
}

extension InstrumentsResult: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("methods")
        w.beginObject()
        for method in methods.keys.sorted() {
            w.key(method)
            w.beginArray()
            for instrument in methods[method] ?? [] { instrument.write(to: &w) }
            w.endArray()
        }
        w.endObject()
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var methods: [String: [Instrument]]?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "methods":
                var all: [String: [Instrument]] = [:]
                try p.object { method, p throws(JSONParseError) in
                    var list: [Instrument] = []
                    try p.array { p throws(JSONParseError) in list.append(try Instrument(parsing: &p)) }
                    all[method] = list
                }
                methods = all
            default: try p.skipValue()
            }
        }
        self.init(methods: try required(methods, "methods", p))
    }
}
