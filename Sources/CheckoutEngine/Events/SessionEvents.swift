import Foundation

/// The event stream of one session: everything recorded after a number, then
/// each new event as it is committed, in order, each exactly once.
///
/// A session's events are numbered 1, 2, 3, ... (``SessionEvent/sequence``),
/// so the stream never skips one: when a live event is not the next number
/// (the events between were committed by another engine on the same store, or
/// published out of order), the missing ones are read from the store first;
/// an event already delivered (recorded, and also seen live while the history
/// was being read) is not delivered again.
///
/// A reader more than its buffer behind the live events is ended with
/// ``FellBehind``, after the events it was handed: it is never skipped
/// ahead. It resumes where it stopped by asking for the events after
/// ``FellBehind/resumeAfter``. Otherwise the stream ends only when the
/// consumer stops iterating (a completed session can still be captured and
/// refunded).
///
/// ```swift
/// var after: Int64 = 0
/// while !Task.isCancelled {
///     do {
///         for try await event in try await checkout.events(ofSession: id, after: after) {
///             after = event.sequence
///             handle(event)
///         }
///     } catch let behind as SessionEvents.FellBehind {
///         after = behind.resumeAfter // read on, from the store
///     }
/// }
/// ```
public struct SessionEvents: AsyncSequence, Sendable {
    public typealias Element = SessionEvent

    /// How many live events a reader may have unread before it is ended.
    public static let defaultBuffer = 1024

    /// The reader fell more than its buffer behind and the stream ended. It
    /// was handed every event up to ``resumeAfter``, with none skipped.
    public struct FellBehind: Error, Sendable, Equatable {
        public var sessionID: String
        /// The number of the last event delivered (or the `after` the stream
        /// was opened with): ask for the events after it.
        public var resumeAfter: Int64

        public init(sessionID: String, resumeAfter: Int64) {
            self.sessionID = sessionID
            self.resumeAfter = resumeAfter
        }
    }

    let sessionID: String
    let after: Int64
    let store: any CheckoutStore
    /// Subscribed when the stream is made, before its history is read: an
    /// event committed from then on is recorded, or live, or both.
    let live: AsyncThrowingStream<SessionEvent, Error>

    init(sessionID: String, after: Int64, store: any CheckoutStore, hub: EventHub, buffer: Int) {
        self.sessionID = sessionID
        self.after = Swift.max(after, 0)
        self.store = store
        self.live = hub.subscribe(sessionID, buffer: buffer)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(sessionID: sessionID, store: store, live: live.makeAsyncIterator(), last: after)
    }

    /// Reads the history when first asked, then live events, filling any gap
    /// from the store. Holds no more than the recorded events it is handing
    /// out and the subscription's buffer.
    public struct Iterator: AsyncIteratorProtocol {
        let sessionID: String
        let store: any CheckoutStore
        var live: AsyncThrowingStream<SessionEvent, Error>.AsyncIterator
        /// The number of the last event delivered.
        var last: Int64
        var recorded: [SessionEvent] = []
        var position = 0
        var historyRead = false

        init(sessionID: String, store: any CheckoutStore, live: AsyncThrowingStream<SessionEvent, Error>.AsyncIterator, last: Int64) {
            self.sessionID = sessionID
            self.store = store
            self.live = live
            self.last = last
        }

        public mutating func next() async throws -> SessionEvent? {
            while true {
                if position < recorded.count {
                    let event = recorded[position]
                    position += 1
                    guard event.sequence > last else { continue }
                    last = event.sequence
                    return event
                }
                if !historyRead {
                    historyRead = true
                    try await readRecorded()
                    continue
                }
                let received: SessionEvent?
                do {
                    received = try await live.next()
                } catch is EventHub.Overflow {
                    throw FellBehind(sessionID: sessionID, resumeAfter: last)
                }
                guard let event = received else { return nil }
                if event.sequence <= last { continue }
                if event.sequence == last + 1 {
                    last = event.sequence
                    return event
                }
                // Events before this one were committed and not seen live: the
                // store has them (a commit is published only once durable).
                try await readRecorded()
            }
        }

        private mutating func readRecorded() async throws {
            recorded = try await store.events(ofSession: sessionID, after: last)
            position = 0
        }
    }
}
