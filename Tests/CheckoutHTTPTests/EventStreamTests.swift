import CheckoutEngine
@testable import CheckoutHTTP
import Foundation
import NIOCore
import Testing
import TestSupport

/// Server-sent events: numbered per session, resumable, never skipping.
@Suite struct ServerSentEventsTests {
    /// The `(id, event)` pairs of a raw event stream, in order.
    func frames(_ text: String) -> [(id: Int64, type: String)] {
        var found: [(id: Int64, type: String)] = []
        var id: Int64?
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("id: ") {
                id = Int64(line.dropFirst(4))
            } else if line.hasPrefix("event: "), let current = id {
                found.append((current, String(line.dropFirst(7))))
                id = nil
            }
        }
        return found
    }

    /// A client that reconnects with the last id it saw gets the next event
    /// (one committed while it was away), then the rest in order, none twice;
    /// ids are the session's own numbers, 1, 2, 3, ...
    ///
    /// Heavy: a whole server on a port (gateway, manifests watcher, listener).
    @Test(.heavy) func resumingWithLastEventIDYieldsTheNextEventAndNoDuplicate() async throws {
        try await APIFixture.with { fixture in
            try await LiveServer.with(fixture) { server in
                // Another session's event first: the log's order is not the session's numbering.
                _ = try await server.request("POST", "/v1/sessions", newSession)
                let id = try #require(try await server.request("POST", "/v1/sessions", newSession).json["id"] as? String)
                let pending = try await server.request("POST", "/v1/sessions/\(id)/attempts", #"{"method":"visa","provider":"mock","instrument":{"scenario":"three_ds"}}"#)
                let attemptID = try #require(pending.json["id"] as? String)

                let first = try await server.events("/v1/sessions/\(id)/events", until: "event: attempt.pending")
                await first.finish()
                let seen = frames(first.received)
                // Reconciliation may have checked the pending attempt already (under
                // load it runs before the reader stops): each check is one more
                // attempt.pending, numbered on.
                #expect(seen.prefix(3).map(\.type) == ["session.created", "attempt.started", "attempt.pending"], "\(first.received)")
                #expect(seen.dropFirst(3).allSatisfy { $0.type == "attempt.pending" }, "\(first.received)")
                #expect(seen.map(\.id) == seen.indices.map { Int64($0) + 1 })
                let last = try #require(seen.last?.id)

                // The payer comes back while no client is connected.
                let done = try await server.request("POST", "/v1/sessions/\(id)/attempts/\(attemptID)/continue", #"{"returnParams":{"outcome":"approve"}}"#)
                #expect(done.json["status"] as? String == "succeeded")
                let resumed = try await server.events("/v1/sessions/\(id)/events", headers: ["Last-Event-ID": "\(last)"],
                                                           until: "event: session.completed")
                await resumed.finish()
                let rest = frames(resumed.received)
                // The next event first (reconciliation may have recorded a check of
                // the pending attempt meanwhile: that is the next one then).
                #expect(rest.first?.id == last + 1, "\(resumed.received)")
                #expect(rest.map(\.id) == rest.indices.map { last + 1 + Int64($0) }, "numbered on, none twice")
                #expect(rest.suffix(2).map(\.type) == ["attempt.succeeded", "session.completed"], "\(resumed.received)")
            }
        }
    }

    /// A client that reads nothing while more events come than its buffer
    /// holds gets the frames it held, in order, and then the end of the
    /// stream (it reconnects with the last id), never the newest frames over
    /// the ones in between.
    @Test func aClientTooSlowForItsBufferIsDisconnectedNotSkipped() async throws {
        let (events, source) = AsyncThrowingStream.makeStream(of: SessionEvent.self)
        for number in 1...10 {
            var event = SessionEvent(sessionID: "s", at: Date(), type: "webhook.received")
            event.sequence = Int64(number)
            source.yield(event)
        }
        source.finish()
        let frames = EventStream.Frames(events, buffer: 3, heartbeat: .seconds(3600))
        defer { frames.cancel() }
        await frames.producer.value
        var written: [Int64] = []
        for await frame in frames.stream {
            written += self.frames(String(buffer: frame)).map(\.id)
        }
        #expect(written == [1, 2, 3])
    }
}
