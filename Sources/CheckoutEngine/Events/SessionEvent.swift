import Foundation
import GatewayPayloads

/// One transition of a session, as recorded in its append-only log (the
/// audit trail) and delivered to subscribers.
public struct SessionEvent: Sendable, Equatable, Codable {
    /// The event's number in its session: 1, 2, 3, ... in commit order, none
    /// skipped and none given twice. Assigned by the store in the commit (0
    /// before). A stream resumes after it (`Last-Event-ID`).
    public var sequence: Int64
    public var sessionID: String
    public var at: Date
    /// `session.created`, `attempt.started`, `attempt.succeeded`, ... (docs in README).
    public var type: String
    public var attemptID: String?
    /// The session's or attempt's status after the event.
    public var status: String?
    public var providerID: String?
    public var amount: Money?
    /// For people: why (routing reason, problem code and detail, provider status).
    public var detail: String?

    public init(sessionID: String, at: Date, type: String, attemptID: String? = nil, status: String? = nil,
                providerID: String? = nil, amount: Money? = nil, detail: String? = nil) {
        self.sequence = 0
        self.sessionID = sessionID
        self.at = at
        self.type = type
        self.attemptID = attemptID
        self.status = status
        self.providerID = providerID
        self.amount = amount
        self.detail = detail
    }
}
