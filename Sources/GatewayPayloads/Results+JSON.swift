import Foundation

/// The codecs of the result documents in `Results.swift` (docs/payloads.md).
/// Member names are the property names; unknown members are skipped.

extension PaymentAction: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("type", type.rawValue)
        w.member("url", url)
        w.member("method", method)
        w.member("formFields", formFields)
        w.member("otpLength", otpLength)
        w.member("expiresAt", expiresAt)
        w.member("sandboxOtp", sandboxOtp)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var type: Kind?
        var this = PaymentAction(type: .redirect)
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "type":
                let raw = try p.string()
                guard let kind = Kind(rawValue: raw) else { throw p.error("unknown action type \"\(raw)\"") }
                type = kind
            case "url": this.url = try p.optionalString()
            case "method": this.method = try p.optionalString()
            case "formFields": this.formFields = try p.stringMap()
            case "otpLength": this.otpLength = p.takeNull() ? nil : Int(try p.integer())
            case "expiresAt": this.expiresAt = try p.optionalString()
            case "sandboxOtp": this.sandboxOtp = try p.optionalString()
            default: try p.skipValue()
            }
        }
        this.type = try required(type, "type", p)
        self = this
    }
}

extension AdapterProblem: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("code", code.rawValue)
        w.member("message", message)
        w.member("retryable", retryable)
        w.member("safeToRetryElsewhere", safeToRetryElsewhere)
        w.member("providerCode", providerCode)
        w.member("field", field)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var code: String?, message: String?, retryable: Bool?, elsewhere: Bool?, providerCode: String?, field: String?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "code": code = try p.string()
            case "message": message = try p.string()
            case "retryable": retryable = try p.bool()
            case "safeToRetryElsewhere": elsewhere = try p.bool()
            case "providerCode": providerCode = try p.optionalString()
            case "field": field = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self.init(
            code: ProblemCode(rawValue: try required(code, "code", p)), message: try required(message, "message", p),
            retryable: try required(retryable, "retryable", p), safeToRetryElsewhere: try required(elsewhere, "safeToRetryElsewhere", p),
            providerCode: providerCode, field: field)
    }
}

extension PaymentStatus {
    static func parse(_ p: inout JSONParser) throws(JSONParseError) -> PaymentStatus {
        let raw = try p.string()
        guard let status = PaymentStatus(rawValue: raw) else { throw p.error("unknown status \"\(raw)\"") }
        return status
    }
}

extension AdapterResult: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("status", status.rawValue)
        w.member("providerReference", providerReference)
        w.member("amount", amount)
        w.member("action", action)
        w.member("problem", problem)
        w.member("providerStatus", providerStatus)
        w.member("totals", totals)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var status: PaymentStatus?
        var this = AdapterResult(status: .failed)
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "status": status = try PaymentStatus.parse(&p)
            case "providerReference": this.providerReference = try p.optionalString()
            case "amount": this.amount = try p.nested(Money.self)
            case "action": this.action = try p.nested(PaymentAction.self)
            case "problem": this.problem = try p.nested(AdapterProblem.self)
            case "providerStatus": this.providerStatus = try p.optionalString()
            case "totals": this.totals = try p.nested(PaymentTotals.self)
            default: try p.skipValue()
            }
        }
        this.status = try required(status, "status", p)
        self = this
    }
}

extension PaymentTotals: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("captured", captured)
        w.member("refunded", refunded)
        w.member("voided", voided)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var captured: Money?, refunded: Money?, voided: Bool?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "captured": captured = try Money(parsing: &p)
            case "refunded": refunded = try Money(parsing: &p)
            case "voided": voided = try p.bool()
            default: try p.skipValue()
            }
        }
        self.init(captured: try required(captured, "captured", p), refunded: try required(refunded, "refunded", p),
                  voided: try required(voided, "voided", p))
    }
}

extension WebhookResult: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("verified", verified)
        w.member("eventId", eventId)
        w.member("paymentId", paymentId)
        w.member("providerReference", providerReference)
        w.member("status", status?.rawValue)
        w.member("amount", amount)
        w.member("problem", problem)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var verified: Bool?
        var this = WebhookResult(verified: false)
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "verified": verified = try p.bool()
            case "eventId": this.eventId = try p.optionalString()
            case "paymentId": this.paymentId = try p.optionalString()
            case "providerReference": this.providerReference = try p.optionalString()
            case "status": this.status = p.takeNull() ? nil : try PaymentStatus.parse(&p)
            case "amount": this.amount = try p.nested(Money.self)
            case "problem": this.problem = try p.nested(AdapterProblem.self)
            default: try p.skipValue()
            }
        }
        this.verified = try required(verified, "verified", p)
        self = this
    }
}

extension ErrorDocument: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("message", message)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var message: String?
        try p.object { name, p throws(JSONParseError) in
            if name == "message" { message = try p.string() } else { try p.skipValue() }
        }
        self.init(message: try required(message, "message", p))
    }
}
