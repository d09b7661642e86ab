import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// A session's events as server-sent events (`text/event-stream`): the
/// recorded ones after `Last-Event-ID` (or `?after=`), then live ones as they
/// are committed. Each is `id: <number>`, `event: <type>`, `data: <JSON>`,
/// where the number is the event's in its session (1, 2, 3, ...), so a client
/// that reconnects with the last id it saw gets the next event, none twice.
/// A comment line every ``heartbeat`` keeps proxies from closing an idle
/// stream and finds a client that left (the write fails); the stream then ends.
///
/// A client too slow for its buffer (``defaultBuffer`` frames not written
/// yet) is disconnected after the frames it holds, never skipped ahead: it
/// reconnects with `Last-Event-ID` and reads on from the store.
enum EventStream {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let heartbeat: Duration = .seconds(15)
    /// Frames a client may have unwritten before it is disconnected (also the
    /// engine's buffer of live events behind them).
    static let defaultBuffer = SessionEvents.defaultBuffer

    static func response(_ events: SessionEvents, buffer: Int = defaultBuffer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let frames = Frames(events, buffer: buffer, heartbeat: heartbeat)
            defer { frames.cancel() }
            // Opens the stream at once, so a client sees the headers before the first event.
            try await writer.write(ByteBuffer(string: ": stream of session events\n\n"))
            // A server shutting down ends the stream (clients reconnect with Last-Event-ID).
            try await withGracefulShutdownHandler {
                for await frame in frames.stream {
                    try await writer.write(frame)
                }
            } onGracefulShutdown: {
                frames.finish()
            }
            try await writer.finish(nil)
        })
    }

    /// Events and heartbeats as frames, in one queue of at most `buffer`
    /// frames that the response writer drains. An event frame that finds the
    /// queue full ends it instead: the writer sends what the queue holds and
    /// the stream ends, the client's last id being the last event it got. A
    /// heartbeat that finds it full is left out (the client is not idle).
    struct Frames: Sendable {
        let stream: AsyncStream<ByteBuffer>
        private let sink: AsyncStream<ByteBuffer>.Continuation
        let producer: Task<Void, Never>
        private let beat: Task<Void, Never>

        init(_ events: some AsyncSequence<SessionEvent, any Error> & Sendable, buffer: Int, heartbeat: Duration) {
            let (stream, sink) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(max(buffer, 1)))
            self.stream = stream
            self.sink = sink
            producer = Task {
                do {
                    for try await event in events {
                        guard case .enqueued = sink.yield(ByteBuffer(bytes: EventStream.frame(event))) else { break }
                    }
                } catch {
                    // The engine ended the stream (this reader fell behind it, or
                    // the store failed): the client reconnects with Last-Event-ID.
                }
                sink.finish()
            }
            beat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    if case .terminated = sink.yield(ByteBuffer(string: ": keep-alive\n\n")) { return }
                }
            }
        }

        /// Ends the stream after the frames it holds.
        func finish() { sink.finish() }

        func cancel() {
            producer.cancel()
            beat.cancel()
            sink.finish()
        }
    }

    static func frame(_ event: SessionEvent) -> [UInt8] {
        var frame = Array("id: \(event.sequence)\nevent: \(event.type)\ndata: ".utf8)
        frame.append(contentsOf: event.jsonBytes())
        frame.append(contentsOf: Array("\n\n".utf8))
        return frame
    }
}
