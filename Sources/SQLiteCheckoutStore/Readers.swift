import GRDB
import Synchronization

/// A few read-only connections of its own for the store's point lookups.
///
/// A lookup through `DatabasePool` checks a reader out of GRDB's pool, checks
/// the schema version and hops through the reader's dispatch queue: together
/// more than the one indexed SELECT it runs. Here a lookup takes a free
/// connection from a short list under a lock and runs on the caller's thread.
/// The lookups run as many at a time as there are connections; when all are
/// taken (more threads than connections) a lookup waits for GRDB's pool.
final class Readers: Sendable {
    private let connections: [DatabaseQueue]
    private let free: Mutex<[Int]>

    init(path: String, configuration: Configuration, count: Int) throws {
        var configuration = configuration
        configuration.readonly = true
        connections = try (0..<count).map { _ in try DatabaseQueue(path: path, configuration: configuration) }
        free = Mutex(Array(connections.indices))
    }

    /// Runs `body` on a free connection, or returns nil when none is free.
    func withConnection<T>(_ body: (Database) throws -> T) throws -> T? {
        guard let index = free.withLock({ $0.popLast() }) else { return nil }
        defer { free.withLock { $0.append(index) } }
        return try connections[index].unsafeRead(body)
    }
}
