import Synchronization

/// Makes concurrent calls with one idempotency key run once: the first runs
/// `body`, the ones that arrive while it runs wait for its outcome (success or
/// error); a concurrent call with the same key but another request fingerprint
/// is a conflict. The gate remembers nothing once a call ends: the durable
/// store keeps committed answers, and `body` consults it first, so a later
/// call is replayed from there (across restarts too).
///
/// A lock, not an actor: `body` runs on the caller's task, with no hop onto
/// and off an actor per call.
public final class IdempotencyGate<Response: Sendable>: Sendable {
    private struct Running {
        var fingerprint: String
        var waiters: [CheckedContinuation<Result<Response, Error>, Never>]
    }

    private let running = Mutex<[String: Running]>([:])

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
        let turn = running.withLock { running -> Turn in
            guard let entry = running[key] else {
                running[key] = Running(fingerprint: fingerprint, waiters: [])
                return .mine
            }
            return entry.fingerprint == fingerprint ? .wait : .conflict
        }
        switch turn {
        case .conflict:
            throw Refusal.conflict(key: key)
        case .wait:
            let result = await withCheckedContinuation { continuation in
                let late = running.withLock { running -> Bool in
                    // The run may have ended between the two locks: then run again.
                    guard running[key] != nil else { return true }
                    running[key]!.waiters.append(continuation)
                    return false
                }
                if late { continuation.resume(returning: .failure(Retry())) }
            }
            if case .failure(let error) = result, error is Retry {
                return try await run(key: key, fingerprint: fingerprint, body)
            }
            return try result.get()
        case .mine:
            let result: Result<Response, Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            let waiters = running.withLock { $0.removeValue(forKey: key)?.waiters ?? [] }
            for waiter in waiters { waiter.resume(returning: result) }
            return try result.get()
        }
    }

    private struct Retry: Error {}
    private enum Turn { case mine, wait, conflict }

    /// How many calls wait for the run under way for `key`.
    public func waiting(for key: String) -> Int { running.withLock { $0[key]?.waiters.count ?? 0 } }

    /// Keys with a run under way.
    public var inFlight: Int { running.withLock { $0.count } }
}
