import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// A session's events as server-sent events (`text/event-stream`): the
/// recorded ones after `Last-Event-ID` (or `?after=`), then live ones as they
/// are committed. Each is `id: <sequence>`, `event: <type>`, `data: <JSON>`.
/// A comment line every ``heartbeat`` keeps proxies from closing an idle
/// stream and finds a client that left (the write fails); the stream then ends.
enum EventStream {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let heartbeat: Duration = .seconds(15)

    static func response(_ events: SessionEvents) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let (frames, sink) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(1024))
            let producer = Task {
                do {
                    for try await event in events { sink.yield(ByteBuffer(bytes: frame(event))) }
                } catch {}
                sink.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    sink.yield(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            defer {
                producer.cancel()
                beat.cancel()
            }
            // Opens the stream at once, so a client sees the headers before the first event.
            try await writer.write(ByteBuffer(string: ": stream of session events\n\n"))
            // A server shutting down ends the stream (clients reconnect with Last-Event-ID).
            try await withGracefulShutdownHandler {
                for await frame in frames {
                    try await writer.write(frame)
                }
            } onGracefulShutdown: {
                sink.finish()
            }
            try await writer.finish(nil)
        })
    }

    static func frame(_ event: SessionEvent) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("sequence", event.sequence)
        writer.member("sessionId", event.sessionID)
        writer.member("at", ISO8601DateFormatter.gateway.string(from: event.at))
        writer.member("type", event.type)
        writer.member("attemptId", event.attemptID)
        writer.member("status", event.status)
        writer.member("providerId", event.providerID)
        if let amount = event.amount {
            writer.key("amount")
            writer.beginObject()
            writer.member("value", amount.value)
            writer.member("currency", amount.currency)
            writer.endObject()
        }
        writer.member("detail", event.detail)
        writer.endObject()
        var frame = Array("id: \(event.sequence)\nevent: \(event.type)\ndata: ".utf8)
        frame.append(contentsOf: writer.bytes)
        frame.append(contentsOf: Array("\n\n".utf8))
        return frame
    }
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let gateway: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
