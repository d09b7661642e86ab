import Foundation
import GatewayPayloads

/// One transition of a session, as recorded in its append-only log (the
/// audit trail) and delivered to subscribers.
public struct SessionEvent: Sendable, Equatable {
    /// The event's number in its session: 1, 2, 3, ... in commit order, none
    /// skipped and none given twice. Assigned by the store in the commit (0
    /// before). A stream resumes after it (`Last-Event-ID`).
    public var sequence: Int64
    public var sessionID: String
    public var at: Date
    /// `session.created`, `attempt.started`, ... (``Kind/all``; README "Session events").
    public var type: Kind
    public var attemptID: String?
    /// The session's or attempt's status after the event.
    public var status: String?
    public var providerID: String?
    public var amount: Money?
    /// For people: why (routing reason, problem code and detail, provider status).
    public var detail: String?

    /// Text a provider wrote (a status, a message) may hold U+0000, which a
    /// store's text cannot (PostgreSQL refuses it): it is U+FFFD here, so
    /// every store, and every reader, live or resumed, sees the same event.
    /// (The ids and the type are the engine's own, never such text.)
    public init(sessionID: String, at: Date, type: Kind, attemptID: String? = nil, status: String? = nil,
                providerID: String? = nil, amount: Money? = nil, detail: String? = nil) {
        self.sequence = 0
        self.sessionID = sessionID
        self.at = at
        self.type = type
        self.attemptID = attemptID
        self.status = status.map(StoredText.storable)
        self.providerID = providerID
        self.amount = amount
        self.detail = detail.map(StoredText.storable)
    }
}

/// Text as every store can keep it.
public enum StoredText {
    /// `text` with each U+0000 (which PostgreSQL's text refuses) as U+FFFD.
    public static func storable(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return text.replacingOccurrences(of: "\u{0000}", with: "\u{FFFD}")
    }
}
