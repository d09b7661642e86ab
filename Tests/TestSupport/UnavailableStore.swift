import CheckoutEngine
import Foundation
import Synchronization

/// A store in front of another (an in-memory SQLite one) whose chosen
/// methods a test makes throw ``StoreUnavailable`` (the database gone), and
/// which records the limit of every claim of due attempts.
public final class UnavailableStore: CheckoutStore, APIKeyStore, Sendable {
    /// The store's methods, by name.
    public enum Method: Sendable, Hashable, CaseIterable {
        case commit, session, sessionVersion, sessionID, referenceHolder, answer, events, dueAttempts, claimDueAttempts, heldPayments
        case expiredSessions, hasWebhook, createAPIKey, apiKey, apiKeys, revokeAPIKey
    }

    public let base: any CheckoutStore & APIKeyStore
    /// What every failing call throws: its text stands for the database's
    /// location and error, which callers must never be shown.
    public let reason: String
    private let failing = Mutex<Set<Method>>([])
    private let claims = Mutex<[Int]>([])

    public init(_ base: any CheckoutStore & APIKeyStore, reason: String = "postgres://gateway@db.internal:5432/payments?schema=secret_schema: connection refused") {
        self.base = base
        self.reason = reason
    }

    /// Makes `methods` throw (and every other one answer) from now on.
    public func fail(_ methods: Set<Method>) { failing.withLock { $0 = methods } }
    /// Every method throws from now on.
    public func failAll() { fail(Set(Method.allCases)) }
    /// Every method answers again.
    public func recover() { fail([]) }

    /// The `limit` of each ``claimDueAttempts(at:limit:claimant:until:)`` call, in order.
    public var claimLimits: [Int] { claims.withLock { $0 } }

    private func check(_ method: Method) throws {
        if failing.withLock({ $0.contains(method) }) { throw StoreUnavailable(reason) }
    }

    public func commit(_ change: StoreChange) async throws -> [SessionEvent] {
        try check(.commit)
        return try await base.commit(change)
    }

    public func session(_ id: String) async throws -> Session? {
        try check(.session)
        return try await base.session(id)
    }

    public func sessionVersion(_ id: String) async throws -> Int? {
        try check(.sessionVersion)
        return try await base.sessionVersion(id)
    }

    public func sessionID(ofAttempt attemptID: String) async throws -> String? {
        try check(.sessionID)
        return try await base.sessionID(ofAttempt: attemptID)
    }

    public func attempt(ofProvider provider: String, holding reference: String) async throws -> String? {
        try check(.referenceHolder)
        return try await base.attempt(ofProvider: provider, holding: reference)
    }

    public func answer(forKey key: String) async throws -> IdempotentAnswer? {
        try check(.answer)
        return try await base.answer(forKey: key)
    }

    public func events(ofSession id: String, after: Int64) async throws -> [SessionEvent] {
        try check(.events)
        return try await base.events(ofSession: id, after: after)
    }

    public func dueAttempts(at now: Date, limit: Int) async throws -> [AttemptRef] {
        try check(.dueAttempts)
        return try await base.dueAttempts(at: now, limit: limit)
    }

    public func claimDueAttempts(at now: Date, limit: Int, claimant: String, until: Date) async throws -> [AttemptRef] {
        claims.withLock { $0.append(limit) }
        try check(.claimDueAttempts)
        return try await base.claimDueAttempts(at: now, limit: limit, claimant: claimant, until: until)
    }

    public func heldPayments(limit: Int) async throws -> [AttemptRef] {
        try check(.heldPayments)
        return try await base.heldPayments(limit: limit)
    }

    public func expiredSessions(at now: Date, limit: Int) async throws -> [String] {
        try check(.expiredSessions)
        return try await base.expiredSessions(at: now, limit: limit)
    }

    /// Closes the store it stands in front of.
    public func close() async {
        await base.close()
    }

    public func hasWebhook(provider: String, eventID: String) async throws -> Bool {
        try check(.hasWebhook)
        return try await base.hasWebhook(provider: provider, eventID: eventID)
    }

    public func createAPIKey(_ key: APIKeyRecord) async throws {
        try check(.createAPIKey)
        try await base.createAPIKey(key)
    }

    public func apiKey(hash: String) async throws -> APIKeyRecord? {
        try check(.apiKey)
        return try await base.apiKey(hash: hash)
    }

    public func apiKeys() async throws -> [APIKeyRecord] {
        try check(.apiKeys)
        return try await base.apiKeys()
    }

    public func revokeAPIKey(id: String, at: Date) async throws -> APIKeyRecord? {
        try check(.revokeAPIKey)
        return try await base.revokeAPIKey(id: id, at: at)
    }
}
