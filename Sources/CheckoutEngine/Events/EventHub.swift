import Foundation
import Synchronization

/// Fans committed events out to live subscribers, per session.
///
/// A subscriber's buffer holds at most `buffer` events it has not read yet.
/// When one more arrives, the subscriber is ended with ``Overflow`` after the
/// events it already holds: a reader too slow for its buffer is disconnected,
/// never handed a later event over a skipped one.
final class EventHub: Sendable {
    /// A subscriber fell more than its buffer behind and was ended.
    struct Overflow: Error {}

    private typealias Continuation = AsyncThrowingStream<SessionEvent, Error>.Continuation

    private let subscribers = Mutex<[String: [UInt64: Continuation]]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A stream of the events of `sessionID` published from now on, holding at
    /// most `buffer` unread ones (more ends it with ``Overflow``). Dropping
    /// the stream unsubscribes.
    func subscribe(_ sessionID: String, buffer: Int) -> AsyncThrowingStream<SessionEvent, Error> {
        precondition(buffer > 0, "an event buffer holds at least one event")
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingOldest(buffer))
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[sessionID, default: [:]][id] = continuation }
        continuation.onTermination = { [weak self] _ in
            let nobody = self?.subscribers.withLock { all -> Bool in
                all[sessionID]?[id] = nil
                if all[sessionID]?.isEmpty == true { all[sessionID] = nil }
                return all[sessionID] == nil
            }
            if nobody == true { self?.lastDelivered.withLock { $0[sessionID] = nil } }
        }
        return stream
    }

    /// Hands committed `events` to their sessions' subscribers, in order. A
    /// subscriber with no room left is ended (``Overflow``) instead.
    func publish(_ events: [SessionEvent]) {
        guard let first = events.first else { return }
        if events.allSatisfy({ $0.sessionID == first.sessionID }) {
            deliver(events, to: first.sessionID)
        } else {
            var order: [String] = []
            let bySession = Dictionary(grouping: events) { event in
                if !order.contains(event.sessionID) { order.append(event.sessionID) }
                return event.sessionID
            }
            for session in order { deliver(bySession[session] ?? [], to: session) }
        }
    }

    /// The sessions someone is reading now, with the number of the last event
    /// handed to their readers (nil: none yet).
    func watched() -> [(session: String, last: Int64?)] {
        let sessions = subscribers.withLock { Array($0.keys) }
        return lastDelivered.withLock { last in sessions.map { ($0, last[$0]) } }
    }

    /// Whether someone reads `sessionID` now, and the number of the last
    /// event handed to its readers.
    func watching(_ sessionID: String) -> (watched: Bool, last: Int64?) {
        let watched = subscribers.withLock { $0[sessionID] != nil }
        return (watched, watched ? lastDelivered.withLock { $0[sessionID] } : nil)
    }

    private let lastDelivered = Mutex<[String: Int64]>([:])

    private func deliver(_ events: [SessionEvent], to sessionID: String) {
        let targets = subscribers.withLock { $0[sessionID].map { Array($0.values) } ?? [] }
        if targets.isEmpty { return }
        if let newest = events.map(\.sequence).max() {
            lastDelivered.withLock { $0[sessionID] = Swift.max($0[sessionID] ?? 0, newest) }
        }
        for continuation in targets {
            for event in events {
                guard case .enqueued = continuation.yield(event) else {
                    // Full (or already ended): end it after what it holds.
                    continuation.finish(throwing: Overflow())
                    break
                }
            }
        }
    }

    var subscriberCount: Int { subscribers.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
