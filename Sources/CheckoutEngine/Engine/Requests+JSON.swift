import Foundation
import GatewayPayloads
import PaymentFields

extension SessionSnapshot: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("session", session)
        w.key("availableMethods")
        w.beginArray()
        for method in availableMethods { w.string(method) }
        w.endArray()
        w.key("instruments")
        w.beginObject()
        for method in instruments.keys.sorted() {
            w.key(method)
            w.beginArray()
            for instrument in instruments[method] ?? [] { instrument.write(to: &w) }
            w.endArray()
        }
        w.endObject()
        w.key("fields")
        Field.write(forms: fields, encoded: forms, to: &w)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var session: Session?, methods: [String]?
        var instruments: [String: [OfferedInstrument]] = [:]
        var fields: [String: [Field]] = [:]
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "session": session = try Session(parsing: &p)
            case "fields":
                try p.object { method, p throws(JSONParseError) in
                    var list: [Field] = []
                    try p.array { p throws(JSONParseError) in
                        // Lenient: a stored answer stays readable if the field grammar tightens later.
                        if case .success(let field) = Field.parse(try p.value(), at: "$.fields.\(method)") { list.append(field) }
                    }
                    fields[method] = list
                }
            case "availableMethods":
                var list: [String] = []
                try p.array { p throws(JSONParseError) in list.append(try p.string()) }
                methods = list
            case "instruments":
                try p.object { method, p throws(JSONParseError) in
                    var list: [OfferedInstrument] = []
                    try p.array { p throws(JSONParseError) in list.append(try OfferedInstrument(parsing: &p)) }
                    instruments[method] = list
                }
            default: try p.skipValue()
            }
        }
        self.init(session: try required(session, "session", p), availableMethods: try required(methods, "availableMethods", p),
                  instruments: instruments, fields: fields)
    }
}

extension PaymentChange: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("operation", operation.rawValue)
        w.member("amount", amount)
        w.member("providerReference", providerReference)
        w.member("balance", balance)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, operation: PaymentOperation?, amount: Money?, providerReference: String?, balance: PaymentBalance?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "paymentId": paymentId = try p.string()
            case "operation": operation = try p.enumeration(PaymentOperation.self)
            case "amount": amount = try p.nested(Money.self)
            case "providerReference": providerReference = try p.optionalString()
            case "balance": balance = try PaymentBalance(parsing: &p)
            default: try p.skipValue()
            }
        }
        self.init(paymentId: try required(paymentId, "paymentId", p), operation: try required(operation, "operation", p), amount: amount,
                  providerReference: providerReference, balance: try required(balance, "balance", p))
    }
}
