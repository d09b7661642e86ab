import CheckoutEngine
import Logging
import PostgresNIO
import Synchronization

/// Listens, on a connection of its own, for the commits of every host
/// (`NOTIFY gateway_events, 'SESSION:LAST'`, sent by each commit when it
/// commits), and hands them to the store's readers (``CommittedEventFeed``).
///
/// Started by the first reader. When its connection is lost it connects
/// again (100 ms doubling to 2 s) and, once it listens again, tells every
/// reader to look at the store (``CommittedEvents/resync``): a notice sent
/// while it was away is never waited for. It says so once it first listens
/// too, for the commits made before it did.
final class EventListener: Sendable {
    static let channel = "gateway_events"

    private let connect: @Sendable () throws -> PostgresConnection.Configuration
    private let logger: Logger
    private let readers = Mutex<Readers>(Readers())
    private let listening = Mutex<Task<Void, Never>?>(nil)

    private struct Readers {
        var next = 0
        var all: [Int: AsyncStream<CommittedEvents>.Continuation] = [:]
        var closed = false
    }

    init(connect: @escaping @Sendable () throws -> PostgresConnection.Configuration, logger: Logger) {
        self.connect = connect
        self.logger = logger
    }

    /// A new reader of the notices, from now on.
    func notices() -> AsyncStream<CommittedEvents> {
        // Unbounded: a notice dropped here would be missed silently (no
        // resync follows it); the reader (the engine's relay) only reads the
        // store for sessions someone watches, and keeps up.
        let (stream, continuation) = AsyncStream.makeStream(of: CommittedEvents.self)
        let id: Int? = readers.withLock { readers in
            guard !readers.closed else { return nil }
            readers.next += 1
            readers.all[readers.next] = continuation
            return readers.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.readers.withLock { _ = $0.all.removeValue(forKey: id) } }
        listening.withLock { task in
            if task == nil { task = Task.detached { await self.listen() } }   // the store's, not its first reader's (PoolKeeper)
        }
        return stream
    }

    func close() async {
        let continuations = readers.withLock { readers in
            readers.closed = true
            defer { readers.all = [:] }
            return Array(readers.all.values)
        }
        for continuation in continuations { continuation.finish() }
        let task = listening.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func broadcast(_ notice: CommittedEvents) {
        for continuation in readers.withLock({ Array($0.all.values) }) { continuation.yield(notice) }
    }

    private func listen() async {
        var wait = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: try connect(), id: 1, logger: logger)
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        wait = .milliseconds(100)
                        broadcast(.resync)
                        for try await notification in notifications {
                            if let notice = Self.notice(notification.payload) { broadcast(notice) }
                        }
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("listening for other hosts' events: \(PostgresCheckoutStore.reason(error)); listening again") }
                }
                try? await connection.close()
            } catch {
                logger.debug("listening for other hosts' events: \(PostgresCheckoutStore.reason(error))")
            }
            try? await Task.sleep(for: wait)
            wait = min(wait * 2, .seconds(2))
        }
    }

    /// `SESSION:LAST` (a session id may itself hold a colon: the last one splits).
    static func notice(_ payload: String) -> CommittedEvents? {
        guard let colon = payload.lastIndex(of: ":"), let last = Int64(payload[payload.index(after: colon)...]) else { return nil }
        return .recorded(session: String(payload[..<colon]), last: last)
    }
}
