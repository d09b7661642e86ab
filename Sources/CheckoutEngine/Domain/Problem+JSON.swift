import Foundation
import GatewayPayloads
import PaymentFields

extension Problem.PayerMessage: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("en", en)
        w.member("ar", ar)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var en: String?, ar: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "en": en = try p.string()
            case "ar": ar = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(en: try required(en, "en", p), ar: try required(ar, "ar", p))
    }
}

extension Problem: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("type", type)
        w.member("title", title)
        w.member("status", Int64(status))
        w.member("detail", detail)
        w.member("retryable", retryable)
        w.member("code", code.rawValue)
        w.member("payerMessage", payerMessage)
        w.member("providerCode", providerCode)
        w.member("field", field)
        if let problems {
            w.key("problems")
            w.beginArray()
            for item in problems {
                w.beginObject()
                w.member("field", item.field)
                w.member("code", item.code)
                w.member("payerMessage", item.payerMessage)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var type: String?, title: String?, status: Int64?, detail: String?, retryable: Bool?, code: String?
        var payerMessage: PayerMessage?, providerCode: String?, field: String?
        var problems: [FieldProblem]?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "type": type = try p.string()
            case "title": title = try p.string()
            case "status": status = try p.integer()
            case "detail": detail = try p.string()
            case "retryable": retryable = try p.bool()
            case "code": code = try p.string()
            case "payerMessage": payerMessage = try PayerMessage(parsing: &p)
            case "providerCode": providerCode = try p.optionalString()
            case "field": field = try p.optionalString()
            case "problems":
                var list: [FieldProblem] = []
                try p.array { p throws(JSONParseError) in
                    var field: String?, code: String?, message: PayerMessage?
                    try p.object { key, p throws(JSONParseError) in
                        switch key {
                        case "field": field = try p.string()
                        case "code": code = try p.string()
                        case "payerMessage": message = try PayerMessage(parsing: &p)
                        default: try p.skipValue()
                        }
                    }
                    list.append(FieldProblem(field: try required(field, "field", p), code: try required(code, "code", p),
                                             payerMessage: try required(message, "payerMessage", p)))
                }
                problems = list
            default: try p.skipValue()
            }
        }
        self.init(
            type: try required(type, "type", p), title: try required(title, "title", p), status: Int(try required(status, "status", p)),
            detail: try required(detail, "detail", p), retryable: try required(retryable, "retryable", p), code: ProblemCode(rawValue: try required(code, "code", p)),
            payerMessage: try required(payerMessage, "payerMessage", p), providerCode: providerCode, field: field, problems: problems)
    }
}
