import Foundation

/// The codecs of the request documents in `Requests.swift` (docs/payloads.md).
/// Member names are the property names; unknown members are skipped.

extension Payer: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("name", name)
        w.member("email", email)
        w.member("phone", phone)
        w.member("reference", reference)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        self.init()
        var this = self
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "name": this.name = try p.optionalString()
            case "email": this.email = try p.optionalString()
            case "phone": this.phone = try p.optionalString()
            case "reference": this.reference = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self = this
    }
}

extension AuthorizeRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("idempotencyKey", idempotencyKey)
        w.member("amount", amount)
        w.member("method", method)
        w.member("country", country)
        w.member("orderId", orderId)
        w.member("capture", capture.rawValue)
        if let instrument {
            w.key("instrument")
            w.value(.object(instrument))
        }
        w.member("payer", payer)
        w.member("returnUrl", returnUrl)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, key: String?, amount: Money?, method: String?, orderId: String?, capture: CaptureMode?
        var country: String?, instrument: [String: JSONValue]?, payer: Payer?, returnUrl: String?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "paymentId": paymentId = try p.string()
            case "idempotencyKey": key = try p.string()
            case "amount": amount = try Money(parsing: &p)
            case "method": method = try p.string()
            case "country": country = try p.optionalString()
            case "orderId": orderId = try p.string()
            case "capture":
                let raw = try p.string()
                guard let mode = CaptureMode(rawValue: raw) else { throw p.error("capture must be \"automatic\" or \"manual\"") }
                capture = mode
            case "instrument":
                if p.takeNull() { break }
                guard case .object(let members) = try p.value() else { throw p.error("instrument must be an object") }
                instrument = members
            case "payer": payer = try p.nested(Payer.self)
            case "returnUrl": returnUrl = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self.init(
            paymentId: try required(paymentId, "paymentId", p), idempotencyKey: try required(key, "idempotencyKey", p),
            amount: try required(amount, "amount", p), method: try required(method, "method", p), country: country,
            orderId: try required(orderId, "orderId", p), capture: try required(capture, "capture", p),
            instrument: instrument, payer: payer, returnUrl: returnUrl)
    }
}

extension ContinueRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("idempotencyKey", idempotencyKey)
        w.member("providerReference", providerReference)
        w.member("otp", otp)
        w.member("returnParams", returnParams)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, key: String?, reference: String?, otp: String?, params: [String: String]?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "paymentId": paymentId = try p.string()
            case "idempotencyKey": key = try p.string()
            case "providerReference": reference = try p.string()
            case "otp": otp = try p.optionalString()
            case "returnParams": params = try p.stringMap()
            default: try p.skipValue()
            }
        }
        self.init(
            paymentId: try required(paymentId, "paymentId", p), idempotencyKey: try required(key, "idempotencyKey", p),
            providerReference: try required(reference, "providerReference", p), otp: otp, returnParams: params)
    }
}

extension VerifyRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("providerReference", providerReference)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, reference: String?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "paymentId": paymentId = try p.string()
            case "providerReference": reference = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self.init(paymentId: try required(paymentId, "paymentId", p), providerReference: reference)
    }
}

extension AmountRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("idempotencyKey", idempotencyKey)
        w.member("providerReference", providerReference)
        w.member("amount", amount)
        w.member("reason", reason)
        w.member("alreadyCaptured", alreadyCaptured)
        if let captures {
            w.key("captures")
            w.beginArray()
            for capture in captures { capture.write(to: &w) }
            w.endArray()
        }
        w.member("alreadyRefunded", alreadyRefunded)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, key: String?, reference: String?, amount: Money?, reason: String?, alreadyCaptured: Money?
        var captures: [CaptureReference]?, alreadyRefunded: Money?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "paymentId": paymentId = try p.string()
            case "idempotencyKey": key = try p.string()
            case "providerReference": reference = try p.string()
            case "amount": amount = try Money(parsing: &p)
            case "reason": reason = try p.optionalString()
            case "alreadyCaptured": alreadyCaptured = try p.nested(Money.self)
            case "captures":
                if p.takeNull() {
                    captures = nil
                } else {
                    var list: [CaptureReference] = []
                    try p.array { p throws(JSONParseError) in list.append(try CaptureReference(parsing: &p)) }
                    captures = list
                }
            case "alreadyRefunded": alreadyRefunded = try p.nested(Money.self)
            default: try p.skipValue()
            }
        }
        self.init(
            paymentId: try required(paymentId, "paymentId", p), idempotencyKey: try required(key, "idempotencyKey", p),
            providerReference: try required(reference, "providerReference", p), amount: try required(amount, "amount", p), reason: reason,
            alreadyCaptured: alreadyCaptured, captures: captures, alreadyRefunded: alreadyRefunded)
    }
}

extension CaptureReference: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("providerReference", providerReference)
        w.member("amount", amount)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var reference: String?, amount: Money?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "providerReference": reference = try p.string()
            case "amount": amount = try Money(parsing: &p)
            default: try p.skipValue()
            }
        }
        self.init(providerReference: try required(reference, "providerReference", p), amount: try required(amount, "amount", p))
    }
}

extension VoidRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("idempotencyKey", idempotencyKey)
        w.member("providerReference", providerReference)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, key: String?, reference: String?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "paymentId": paymentId = try p.string()
            case "idempotencyKey": key = try p.string()
            case "providerReference": reference = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(
            paymentId: try required(paymentId, "paymentId", p), idempotencyKey: try required(key, "idempotencyKey", p),
            providerReference: try required(reference, "providerReference", p))
    }
}

extension WebhookRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("headers", headers)
        w.member("body", body)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var headers: [String: String]?, body: String?
        try p.object { name, p throws(JSONParseError) in
            switch name {
            case "headers": headers = try p.stringMap()
            case "body": body = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(headers: try required(headers, "headers", p), body: try required(body, "body", p))
    }
}
