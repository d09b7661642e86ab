import Foundation
import GatewayPayloads

/// An event as the API shows it (the `data` of a server-sent event, the CLI's
/// `--json`, a webhook body): the OpenAPI document's `SessionEvent`.
extension SessionEvent: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("sequence", sequence)
        w.member("sessionId", sessionID)
        w.member("at", date: at)
        w.member("type", type.rawValue)
        w.member("attemptId", attemptID)
        w.member("status", status)
        w.member("providerId", providerID)
        w.member("amount", amount)
        w.member("detail", detail)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var sequence: Int64 = 0, sessionID: String?, at: Date?, type: Kind?
        var attemptID: String?, status: String?, providerID: String?, amount: Money?, detail: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "sequence": sequence = try p.integer()
            case "sessionId": sessionID = try p.string()
            case "at": at = try p.date()
            case "type": type = Kind(rawValue: try p.string())
            case "attemptId": attemptID = try p.optionalString()
            case "status": status = try p.optionalString()
            case "providerId": providerID = try p.optionalString()
            case "amount": amount = try p.nested(Money.self)
            case "detail": detail = try p.optionalString()
            default: try p.skipValue()
            }
        }
        self.init(sessionID: try required(sessionID, "sessionId", p), at: try required(at, "at", p), type: try required(type, "type", p),
                  attemptID: attemptID, status: status, providerID: providerID, amount: amount, detail: detail)
        self.sequence = sequence
    }
}
