import Foundation
import NIOPosix
import PluginHost

/// Resolves endpoints' names on threads of its own, each lookup bounded in
/// time: a name server that never answers (a merchant's, or one an attacker
/// registered an endpoint for) holds one of these threads, never one of the
/// pool adapters' egress checks share, and a try waits for it at most
/// `timeout` (then fails, and is retried).
public final class WebhookResolver: Sendable {
    private let pool: NIOThreadPool
    private let timeout: Duration

    public init(threads: Int = 2, timeout: Duration = .seconds(5)) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        self.timeout = timeout
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// The name did not resolve within the timeout.
    struct TimedOut: Error, CustomStringConvertible {
        var host: String
        var timeout: Duration
        var description: String { "\(host) did not resolve within \(timeout)" }
    }

    /// Every address of `host`, or an error within the timeout.
    public func resolve(_ host: String) async throws -> [String] {
        let (pool, timeout) = (self.pool, self.timeout)
        return try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask { try await EgressAddress.systemResolve(host, on: pool) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut(host: host, timeout: timeout)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw TimedOut(host: host, timeout: timeout) }
            return first
        }
    }
}
