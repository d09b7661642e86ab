import Foundation
import GatewayPayloads
import PaymentFields

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
