import Synchronization

/// One async lock per key: operations on one session run one at a time, while
/// different sessions proceed in parallel. Waiters are served in arrival order.
final class SessionLocks: Sendable {
    private let held = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    func withLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: String) async {
        let free = held.withLock { all -> Bool in
            guard all[key] == nil else { return false }
            all[key] = []
            return true
        }
        if free { return }
        await withCheckedContinuation { continuation in
            let now = held.withLock { all -> Bool in
                guard all[key] != nil else {
                    all[key] = []
                    return true
                }
                all[key]!.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release(_ key: String) {
        let next = held.withLock { all -> CheckedContinuation<Void, Never>? in
            guard var waiters = all[key], !waiters.isEmpty else {
                all[key] = nil
                return nil
            }
            let first = waiters.removeFirst()
            all[key] = waiters
            return first
        }
        next?.resume()
    }
}
