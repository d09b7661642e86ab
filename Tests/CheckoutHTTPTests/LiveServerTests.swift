import CheckoutEngine
import CheckoutHTTP
import Foundation
import Testing
import TestSupport

/// The server on a loopback port, as `gateway serve` runs it.
@Suite(.heavy) struct LiveServerTests {
    /// Server-sent events deliver the transitions of an attempt that goes
    /// pending (3-D Secure) and then succeeds, as they are committed.
    @Test func eventsStreamAnAttemptThatGoesPendingThenSucceeds() async throws {
        try await APIFixture.with { fixture in
            try await LiveServer.with(fixture) { server in
                let session = try await server.request("POST", "/v1/sessions", newSession)
                let id = try #require(session.json["id"] as? String)
                let stream = try await server.events("/v1/sessions/\(id)/events", until: "event: attempt.succeeded")
                // The stream is subscribed once its opening comment is written: what follows is streamed live.
                #expect(await stream.wait(for: LiveServer.streamOpening), "the stream did not open: \(stream.received)")
                let pending = try await server.request("POST", "/v1/sessions/\(id)/attempts", #"{"method":"visa","provider":"mock","instrument":{"scenario":"three_ds"}}"#)
                #expect(pending.json["status"] as? String == "pending")
                let attemptID = try #require(pending.json["id"] as? String)
                // The pending attempt reached the client before the payer comes back.
                #expect(await stream.wait(for: "event: attempt.pending"), "\(stream.received)")
                let done = try await server.request("POST", "/v1/sessions/\(id)/attempts/\(attemptID)/continue", #"{"returnParams":{"outcome":"approve"}}"#)
                #expect(done.json["status"] as? String == "succeeded")
                await stream.finish()
                let text = stream.received
                #expect(stream.status == 200 && stream.headers["content-type"]?.hasPrefix("text/event-stream") == true, "\(stream.headers)")
                let order = ["event: session.created", "event: attempt.started", "event: attempt.pending", "event: attempt.succeeded"]
                let positions = order.map { text.range(of: $0)?.lowerBound }
                #expect(positions.allSatisfy { $0 != nil }, "\(text)")
                #expect(zip(positions, positions.dropFirst()).allSatisfy { ($0.0 ?? text.endIndex) < ($0.1 ?? text.startIndex) })
            }
        }
    }

    /// Disabling a provider by editing its manifest under a running server
    /// removes its methods from new sessions once the manifests watcher sees
    /// the edit (it polls every 100 ms here), while an attempt in flight on it
    /// still completes.
    @Test func disablingAProviderByEditingItsManifestTakesEffectLiveAndSparesInFlightAttempts() async throws {
        try await APIFixture.with { fixture in
            try await LiveServer.with(fixture) { server in
                let session = try await server.request("POST", "/v1/sessions", newSession)
                let id = try #require(session.json["id"] as? String)
                #expect((session.json["availableMethods"] as? [String])?.contains("mada") == true)
                // An attempt the mock answers after 1.5 s.
                let inFlight = Task { () async throws -> (Int, String?) in
                    let reply = try await server.request("POST", "/v1/sessions/\(id)/attempts", #"{"method":"mada","instrument":{"delay_ms":1500}}"#)
                    return (reply.status, reply.json["status"] as? String)
                }
                // Disabled once the attempt is in flight at the mock: its session's event stream says so.
                let started = try await server.events("/v1/sessions/\(id)/events", until: "event: attempt.started")
                await started.finish()
                #expect(started.received.contains("event: attempt.started"), "the attempt never started: \(started.received)")
                try fixture.setManifest("mock.json", enabled: false)
                let edited = ContinuousClock.now
                // A backstop, scaled: a loaded machine is slow, not wrong.
                let limit = Duration.seconds(60).scaled
                var methods: [String] = ["mada"]
                while methods.contains("mada"), ContinuousClock.now - edited < limit {
                    try await Task.sleep(for: .milliseconds(50))
                    methods = (try await server.request("POST", "/v1/sessions", newSession).json["availableMethods"] as? [String]) ?? []
                }
                #expect(!methods.contains("mada"), "mock still offered \(limit) after its manifest was disabled")
                #expect(methods == ["visa"])
                let (status, outcome) = try await inFlight.value
                #expect(status == 201 && outcome == "succeeded", "the in-flight attempt on the disabled provider completes")
                // A new attempt on mock is refused.
                let fresh = try #require(try await server.request("POST", "/v1/sessions", newSession).json["id"] as? String)
                #expect(try await server.request("POST", "/v1/sessions/\(fresh)/attempts", #"{"method":"mada"}"#).status == 422)
            }
        }
    }

    /// A request carrying a card number leaves no trace of it in the logs or
    /// the database (instrument data goes to the adapter only; paths are masked).
    @Test func aCardNumberInARequestReachesNeitherLogsNorDatabase() async throws {
        try await APIFixture.with { fixture in
            let pan = "4111111111111111"
            try await LiveServer.with(fixture) { server in
                let id = try #require(try await server.request("POST", "/v1/sessions", newSession).json["id"] as? String)
                let attempt = try await server.request("POST", "/v1/sessions/\(id)/attempts",
                                                       #"{"method":"visa","provider":"mock","instrument":{"card_number":"\#(pan)","cvv":"123","holder":"A B"}}"#)
                #expect(attempt.status == 201)
                _ = try await server.request("GET", "/v1/sessions/\(pan)")
                _ = try await server.request("POST", "/v1/sessions/\(id)/attempts", #"{"method":"visa","instrument":{"card_number":"\#(pan)"},"extra":"\#(pan)"}"#)
            }
            let logs = fixture.logs.all.joined(separator: "\n")
            #expect(!logs.isEmpty)
            #expect(!logs.contains(pan), "the card number reached the logs")
            for file in try FileManager.default.contentsOfDirectory(atPath: fixture.data.path) where file.hasPrefix("checkout.sqlite") {
                let bytes = try Data(contentsOf: fixture.data.appendingPathComponent(file))
                #expect(bytes.range(of: Data(pan.utf8)) == nil, "the card number reached \(file)")
            }
        }
    }
}
