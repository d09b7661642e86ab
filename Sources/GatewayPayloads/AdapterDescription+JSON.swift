/// The codec of ``AdapterDescription``: the document an adapter's `describe`
/// returns (`{"id","version","methods","operations","currencies"}`, the last
/// one omitted when nil), read by the host in process and in a runner, and
/// carried in a runner's READY.
extension AdapterDescription: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", id)
        w.member("version", version)
        w.key("methods")
        w.beginArray()
        for method in methods { w.string(method) }
        w.endArray()
        w.key("operations")
        w.beginArray()
        for operation in operations { w.string(operation.rawValue) }
        w.endArray()
        if let currencies {
            w.key("currencies")
            w.beginArray()
            for currency in currencies { w.string(currency) }
            w.endArray()
        }
        w.endObject()
    }

    /// Reads a description. An operation name this build does not know (one
    /// of a later ABI minor version) is dropped, not refused: the host never
    /// invokes what it does not know, and the adapter stays loadable.
    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, version: String?, methods: [String]?, operations: [PaymentOperation]?, currencies: [String]?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.string()
            case "version": version = try p.string()
            case "methods":
                var list: [String] = []
                try p.array { p throws(JSONParseError) in list.append(try p.string()) }
                methods = list
            case "operations":
                var list: [PaymentOperation] = []
                try p.array { p throws(JSONParseError) in
                    let name = try p.string()
                    if let operation = PaymentOperation(rawValue: name) { list.append(operation) }
                }
                operations = list
            case "currencies":
                if p.takeNull() {
                    currencies = nil
                } else {
                    var list: [String] = []
                    try p.array { p throws(JSONParseError) in list.append(try p.string()) }
                    currencies = list
                }
            default: try p.skipValue()
            }
        }
        self.init(
            id: try required(id, "id", p), version: try required(version, "version", p),
            methods: try required(methods, "methods", p), operations: try required(operations, "operations", p),
            currencies: currencies)
    }
}
