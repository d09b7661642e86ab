/// Makes concurrent calls with one idempotency key run once: the first runs
/// `body`, the ones that arrive while it runs wait for its outcome (success or
/// error); a concurrent call with the same key but another request fingerprint
/// is a conflict. The gate remembers nothing once a call ends: the durable
/// store keeps committed answers, and `body` consults it first, so a later
/// call is replayed from there (across restarts too).
public actor IdempotencyGate<Response: Sendable> {
    private struct Running {
        var fingerprint: String
        var waiters: [CheckedContinuation<Result<Response, Error>, Never>]
    }

    private var running: [String: Running] = [:]

    public init() {}

    /// Why a key could not be used.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key is in use (or was used) with a different request.
        case conflict(key: String)

        public var description: String {
            switch self {
            case .conflict(let key): "idempotency key \"\(key)\" was already used with a different request"
            }
        }
    }

    /// Runs `body` for `key`, or waits for the run already under way.
    public func run(key: String, fingerprint: String, _ body: @Sendable () async throws -> Response) async throws -> Response {
        if var entry = running[key] {
            guard entry.fingerprint == fingerprint else { throw Refusal.conflict(key: key) }
            let result = await withCheckedContinuation { continuation in
                entry.waiters.append(continuation)
                running[key] = entry
            }
            return try result.get()
        }
        running[key] = Running(fingerprint: fingerprint, waiters: [])
        let result: Result<Response, Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        let waiters = running.removeValue(forKey: key)?.waiters ?? []
        for waiter in waiters { waiter.resume(returning: result) }
        return try result.get()
    }

    /// How many calls wait for the run under way for `key`.
    public func waiting(for key: String) -> Int { running[key]?.waiters.count ?? 0 }

    /// Keys with a run under way.
    public var inFlight: Int { running.count }
}
