import Dispatch

/// Work that blocks its thread (loading an adapter: reading and hashing its
/// library, running its `create`, waiting for an isolated adapter's runner
/// to be ready), run from async code.
///
/// Swift concurrency runs every task of the process on a pool of as many
/// threads as there are cores: a synchronous wait on one of them takes a core
/// from every task, and two such waits on a 2-core machine stop the process
/// (its HTTP server, its store, its deadlines). Blocking work runs on a
/// dispatch queue of its own instead; the caller's task waits without a thread.
public enum OffThePool {
    /// Runs `work` on a new serial queue named `label` and returns its result.
    public static func run<T: Sendable, E: Error>(_ label: String, _ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            DispatchQueue(label: label).async { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        }
        return try result.get()
    }
}
