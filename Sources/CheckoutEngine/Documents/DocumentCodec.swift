import Foundation
import GatewayPayloads
import PaymentFields

// The codecs of the engine's documents: sessions (what the store keeps) and
// the answers replayed under idempotency keys, written and read by the one
// codec (GatewayPayloads/Codec): member names are the API's, nil members are
// omitted, dates are wire dates (WireDate; a stored number is read as Unix
// seconds). `DocumentCodecTests` reads back what is written on random
// sessions. Foundation's JSONEncoder cost more per payment than the database
// did (BENCHMARKS.md).

extension JSONParser {
    mutating func enumeration<E: RawRepresentable>(_ type: E.Type) throws(JSONParseError) -> E where E.RawValue == String {
        let raw = try string()
        guard let value = E(rawValue: raw) else { throw error("unknown \(E.self) \"\(raw)\"") }
        return value
    }
}

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

extension PaymentBalance: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("authorized", authorized)
        w.member("captured", captured)
        w.member("refunded", refunded)
        w.member("voided", voided)
        w.key("inFlight")
        w.beginObject()
        for (key, held) in inFlight.sorted(by: { $0.key < $1.key }) {
            w.key(key)
            w.beginObject()
            w.member("operation", held.operation.rawValue)
            w.member("amount", held.amount)
            w.member("requestKey", held.requestKey)
            w.member("reason", held.reason)
            w.member("since", date: held.since)
            w.member("nextCheckAt", date: held.nextCheckAt)
            w.member("checks", Int64(held.checks))
            w.member("sentBy", held.sentBy)
            w.endObject()
        }
        w.endObject()
        w.key("captures")
        w.beginArray()
        for capture in captures {
            w.beginObject()
            w.member("providerReference", capture.providerReference)
            w.member("amount", capture.amount)
            w.endObject()
        }
        w.endArray()
        w.member("capturedAutomatically", capturedAutomatically)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var authorized: Money?, captured: Int64?, refunded: Int64?, voided: Bool?, automatic: Bool?
        var inFlight: [String: InFlight] = [:]
        var captures: [Capture] = []
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "authorized": authorized = try Money(parsing: &p)
            case "captured": captured = try p.integer()
            case "refunded": refunded = try p.integer()
            case "voided": voided = try p.bool()
            case "capturedAutomatically": automatic = try p.bool()
            case "inFlight":
                try p.object { heldKey, p throws(JSONParseError) in
                    var operation: PaymentOperation?, amount: Int64?, requestKey: String?, reason: String?, since: Date?, next: Date?
                    var checks: Int64 = 0
                    var sentBy: String?
                    try p.object { member, p throws(JSONParseError) in
                        switch member {
                        case "operation": operation = try p.enumeration(PaymentOperation.self)
                        case "amount": amount = try p.integer()
                        case "requestKey": requestKey = try p.optionalString()
                        case "reason": reason = try p.optionalString()
                        case "since": since = try p.optionalDate()
                        case "nextCheckAt": next = try p.optionalDate()
                        case "checks": checks = try p.integer()
                        case "sentBy": sentBy = try p.optionalString()
                        default: try p.skipValue()
                        }
                    }
                    inFlight[heldKey] = InFlight(operation: try required(operation, "operation", p), amount: try required(amount, "amount", p),
                                                 requestKey: requestKey, reason: reason, since: since, nextCheckAt: next, checks: Int(checks),
                                                 sentBy: sentBy)
                }
            case "captures":
                try p.array { p throws(JSONParseError) in
                    var reference: String?, amount: Int64?
                    try p.object { member, p throws(JSONParseError) in
                        switch member {
                        case "providerReference": reference = try p.optionalString()
                        case "amount": amount = try p.integer()
                        default: try p.skipValue()
                        }
                    }
                    captures.append(Capture(providerReference: reference, amount: try required(amount, "amount", p)))
                }
            default: try p.skipValue()
            }
        }
        self.init(
            restoring: try required(authorized, "authorized", p), captured: try required(captured, "captured", p),
            refunded: try required(refunded, "refunded", p), voided: try required(voided, "voided", p), inFlight: inFlight,
            captures: captures, capturedAutomatically: try required(automatic, "capturedAutomatically", p))
    }
}

extension Attempt: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", id)
        w.member("method", method)
        w.member("providerId", providerID)
        w.member("routingReason", routingReason)
        w.member("status", status.rawValue)
        w.member("providerReference", providerReference)
        w.member("providerStatus", providerStatus)
        w.member("action", action)
        w.member("problem", problem)
        w.member("requested", requested)
        w.member("balance", balance)
        w.member("createdAt", date: createdAt)
        w.member("updatedAt", date: updatedAt)
        w.member("leaseUntil", date: leaseUntil)
        w.member("nextCheckAt", date: nextCheckAt)
        w.member("checks", Int64(checks))
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, method: String?, providerID: String?, routingReason: String?, status: AttemptStatus?
        var requested: Money?, createdAt: Date?, updatedAt: Date?, checks: Int64?
        var providerReference: String?, providerStatus: String?, action: PaymentAction?, problem: Problem?
        var balance: PaymentBalance?, leaseUntil: Date?, nextCheckAt: Date?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.string()
            case "method": method = try p.string()
            case "providerId": providerID = try p.string()
            case "routingReason": routingReason = try p.string()
            case "status": status = try p.enumeration(AttemptStatus.self)
            case "providerReference": providerReference = try p.optionalString()
            case "providerStatus": providerStatus = try p.optionalString()
            case "action": action = try p.nested(PaymentAction.self)
            case "problem": problem = try p.nested(Problem.self)
            case "requested": requested = try Money(parsing: &p)
            case "balance": balance = try p.nested(PaymentBalance.self)
            case "createdAt": createdAt = try p.date()
            case "updatedAt": updatedAt = try p.date()
            case "leaseUntil": leaseUntil = try p.optionalDate()
            case "nextCheckAt": nextCheckAt = try p.optionalDate()
            case "checks": checks = try p.integer()
            default: try p.skipValue()
            }
        }
        self.init(id: try required(id, "id", p), method: try required(method, "method", p), providerID: try required(providerID, "providerId", p),
                  routingReason: try required(routingReason, "routingReason", p), requested: try required(requested, "requested", p),
                  at: try required(createdAt, "createdAt", p))
        restore(status: try required(status, "status", p))
        self.providerReference = providerReference
        self.providerStatus = providerStatus
        self.action = action
        self.problem = problem
        self.balance = balance
        self.updatedAt = try required(updatedAt, "updatedAt", p)
        self.leaseUntil = leaseUntil
        self.nextCheckAt = nextCheckAt
        self.checks = Int(try required(checks, "checks", p))
    }
}

extension Session: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(to: &w, instruments: true)
        w.endObject()
    }

    /// The session's members, inside an object the caller opened (the API
    /// adds its own after them); its stored `instruments` only when asked.
    public func writeMembers(to w: inout JSONWriter, instruments withInstruments: Bool) {
        w.member("id", id)
        w.member("mode", mode.rawValue)
        w.member("amount", amount)
        w.member("country", country)
        w.member("orderId", orderID)
        w.member("capture", capture.rawValue)
        w.member("payer", payer)
        w.member("returnUrl", returnURL)
        w.member("status", status.rawValue)
        w.key("attempts")
        w.beginArray()
        for attempt in attempts { attempt.write(to: &w) }
        w.endArray()
        w.member("createdAt", date: createdAt)
        w.member("updatedAt", date: updatedAt)
        w.member("expiresAt", date: expiresAt)
        w.member("version", Int64(version))
        if withInstruments, let instruments {
            w.key("instruments")
            w.beginArray()
            for instrument in instruments { instrument.write(to: &w) }
            w.endArray()
        }
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, amount: Money?, country: String?, orderID: String?, capture: CaptureMode?, payer: Payer?
        var returnURL: String?, status: SessionStatus?, attempts: [Attempt]?, createdAt: Date?, updatedAt: Date?
        var expiresAt: Date?, version: Int64?, instruments: [OfferedInstrument]?
        // A session stored before modes existed is live: never assume test.
        var mode = PaymentMode.live
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.string()
            case "mode": mode = try p.enumeration(PaymentMode.self)
            case "amount": amount = try Money(parsing: &p)
            case "country": country = try p.optionalString()
            case "orderId": orderID = try p.string()
            case "capture": capture = try p.enumeration(CaptureMode.self)
            case "payer": payer = try p.nested(Payer.self)
            case "returnUrl": returnURL = try p.optionalString()
            case "status": status = try p.enumeration(SessionStatus.self)
            case "attempts":
                var list: [Attempt] = []
                try p.array { p throws(JSONParseError) in list.append(try Attempt(parsing: &p)) }
                attempts = list
            case "createdAt": createdAt = try p.date()
            case "updatedAt": updatedAt = try p.date()
            case "expiresAt": expiresAt = try p.date()
            case "version": version = try p.integer()
            case "instruments":
                if p.takeNull() { break }
                var list: [OfferedInstrument] = []
                try p.array { p throws(JSONParseError) in list.append(try OfferedInstrument(parsing: &p)) }
                instruments = list
            default: try p.skipValue()
            }
        }
        let amountValue = try required(amount, "amount", p)
        guard amountValue.value > 0 else { throw p.error("session amount must be positive (got \(amountValue.value))") }
        do {
            self = try Session(id: try required(id, "id", p), mode: mode, amount: amountValue, country: country, orderID: try required(orderID, "orderId", p),
                               capture: try required(capture, "capture", p), payer: payer, returnURL: returnURL,
                               createdAt: try required(createdAt, "createdAt", p), expiresAt: try required(expiresAt, "expiresAt", p))
        } catch let parse as JSONParseError {
            throw parse
        } catch {
            throw p.error("\(error)")
        }
        restore(status: try required(status, "status", p), attempts: try required(attempts, "attempts", p))
        self.updatedAt = try required(updatedAt, "updatedAt", p)
        self.version = Int(try required(version, "version", p))
        self.instruments = instruments
    }
}

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
