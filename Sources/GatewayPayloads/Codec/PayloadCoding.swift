/// The codecs of the payload documents (docs/payloads.md). Member names are the
/// property names; unknown members are skipped.

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
