import Foundation
import GatewayPayloads
import PaymentFields

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
