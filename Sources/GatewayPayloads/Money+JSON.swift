import Foundation

/// `Money` as every payload writes it: `{"value": <minor units>, "currency": "SAR"}`.

extension Money: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("value", value)
        w.member("currency", currency)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var value: Int64?, currency: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "value": value = try p.integer()
            case "currency": currency = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(value: try required(value, "value", p), currency: try required(currency, "currency", p))
    }
}
