import GatewayPayloads

/// An instrument a provider offered a session's payer, as the session keeps
/// it: its display members only. Its `reference` (the provider's handle) is
/// never kept: it is sealed into ``id``, which only this engine's key opens.
public struct OfferedInstrument: Sendable, Hashable {
    /// Set for kinds a payer picks (saved card, phone, web): what an
    /// attempt's `instrumentId` names.
    public var id: String?
    public var provider: String
    public var method: String
    /// The instrument as offered, with no `reference`.
    public var instrument: Instrument

    public init(id: String?, provider: String, method: String, instrument: Instrument) {
        self.id = id
        self.provider = provider
        self.method = method
        self.instrument = instrument
        self.instrument.reference = nil
    }

}

extension OfferedInstrument: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", id)
        w.member("provider", provider)
        w.member("method", method)
        w.member("instrument", instrument)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, provider: String?, method: String?, instrument: Instrument?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.optionalString()
            case "provider": provider = try p.string()
            case "method": method = try p.string()
            case "instrument": instrument = try Instrument(parsing: &p)
            default: try p.skipValue()
            }
        }
        self.init(id: id, provider: try required(provider, "provider", p), method: try required(method, "method", p),
                  instrument: try required(instrument, "instrument", p))
    }
}
