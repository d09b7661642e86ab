/// Runs each mutating request at most once per idempotency key, in memory:
/// the same key with the same request fingerprint gets the first answer
/// (callers that arrive while it runs wait for it); the same key with another
/// fingerprint is a conflict. The durable store keeps answers across restarts;
/// this gate is what makes two concurrent calls with one key run exactly once.
public actor IdempotencyGate<Response: Sendable> {
    private enum Entry {
        case running(fingerprint: String, waiters: [CheckedContinuation<Result<Response, Error>, Never>])
        case done(fingerprint: String, Result<Response, Error>)
    }

    private var entries: [String: Entry] = [:]

    public init() {}

    /// Why a key could not be used.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key was first used with a different request.
        case conflict(key: String)

        public var description: String {
            switch self {
            case .conflict(let key): "idempotency key \"\(key)\" was already used with a different request"
            }
        }
    }

    /// Runs `body` for `key` unless it already ran (or is running) for it.
    /// A failure is remembered like a success: replaying it replays the error.
    public func run(key: String, fingerprint: String, _ body: @Sendable () async throws -> Response) async throws -> Response {
        switch entries[key] {
        case .done(let first, let result)?:
            guard first == fingerprint else { throw Refusal.conflict(key: key) }
            return try result.get()
        case .running(let first, var waiters)?:
            guard first == fingerprint else { throw Refusal.conflict(key: key) }
            let result = await withCheckedContinuation { continuation in
                waiters.append(continuation)
                entries[key] = .running(fingerprint: first, waiters: waiters)
            }
            return try result.get()
        case nil:
            entries[key] = .running(fingerprint: fingerprint, waiters: [])
            let result: Result<Response, Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            if case .running(_, let waiters)? = entries[key] {
                for waiter in waiters { waiter.resume(returning: result) }
            }
            entries[key] = .done(fingerprint: fingerprint, result)
            return try result.get()
        }
    }

    /// Seeds an answer recovered from the durable store (after a restart).
    public func remember(key: String, fingerprint: String, response: Response) {
        entries[key] = .done(fingerprint: fingerprint, .success(response))
    }
}
