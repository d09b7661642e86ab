import Foundation
import Synchronization

/// Fans committed events out to live subscribers, per session.
final class EventHub: Sendable {
    private struct Subscriber {
        var continuation: AsyncThrowingStream<SessionEvent, Error>.Continuation
    }

    private let subscribers = Mutex<[String: [UInt64: Subscriber]]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// Registers a subscriber for `sessionID`; events published afterwards are
    /// yielded to `continuation` until it terminates.
    func subscribe(_ sessionID: String, _ continuation: AsyncThrowingStream<SessionEvent, Error>.Continuation) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[sessionID, default: [:]][id] = Subscriber(continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { all in
                all[sessionID]?[id] = nil
                if all[sessionID]?.isEmpty == true { all[sessionID] = nil }
            }
        }
    }

    func publish(_ events: [SessionEvent]) {
        guard let first = events.first else { return }
        let targets = subscribers.withLock { $0[first.sessionID].map { Array($0.values) } ?? [] }
        for target in targets {
            for event in events { target.continuation.yield(event) }
        }
    }

    var subscriberCount: Int { subscribers.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// The event stream of one session: everything already recorded, then each
/// new event as it is committed, in order, with none twice. It ends only when
/// the consumer stops iterating (a completed session can still be captured
/// and refunded).
public struct SessionEvents: AsyncSequence, Sendable {
    public typealias Element = SessionEvent
    let stream: AsyncThrowingStream<SessionEvent, Error>

    public func makeAsyncIterator() -> AsyncThrowingStream<SessionEvent, Error>.AsyncIterator {
        stream.makeAsyncIterator()
    }

    static func make(sessionID: String, after: Int64, store: any CheckoutStore, hub: EventHub) -> SessionEvents {
        let (live, liveContinuation) = AsyncThrowingStream<SessionEvent, Error>.makeStream(bufferingPolicy: .unbounded)
        hub.subscribe(sessionID, liveContinuation)
        let (out, outContinuation) = AsyncThrowingStream<SessionEvent, Error>.makeStream(bufferingPolicy: .unbounded)
        let pump = Task {
            do {
                var last = after
                for event in try await store.events(ofSession: sessionID, after: after) {
                    outContinuation.yield(event)
                    last = event.sequence
                }
                for try await event in live where event.sequence > last {
                    outContinuation.yield(event)
                    last = event.sequence
                }
                outContinuation.finish()
            } catch {
                outContinuation.finish(throwing: error)
            }
        }
        outContinuation.onTermination = { _ in
            pump.cancel()
            liveContinuation.finish()
        }
        return SessionEvents(stream: out)
    }
}
