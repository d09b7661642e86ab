@testable import CheckoutHTTP
import Logging
import ServiceLifecycle
import TestSupport
import Testing

/// A host that is slow to stop says why: each step of graceful shutdown is
/// logged as it starts and ends, and what it still waits for while it lasts
/// (here a request still in flight, by its method and path).
@Suite struct ShutdownStepTests {
    /// Waits for graceful shutdown, then for `released`.
    struct Lingering: Service {
        let released: AsyncStream<Void>
        func run() async throws {
            try? await gracefulShutdown()
            for await _ in released { break }
        }
    }

    @Test func aStepThatTakesLongNamesWhatItWaitsForUntilItEnds() async throws {
        let logs = CapturedLogs()
        let logger = logs.logger("shutdown")
        let inFlight = RequestsInFlight()
        let stuck = inFlight.begin(method: "POST", path: "/v1/sessions/ses_1/attempts", requestID: "req-1")
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let step = ShutdownStep("the checkout API", doing: "finishing the requests in flight", logger: logger,
                                every: .milliseconds(20)) { inFlight.describe() }
        let group = ServiceGroup(configuration: .init(services: [.init(service: step.service(Lingering(released: released)))], logger: logger))
        let running = Task { try await group.run() }
        #expect(logs.all.allSatisfy { !$0.contains("shutdown:") }, "nothing logged before shutdown")
        await group.triggerGracefulShutdown()
        let named = try await waitUntil(within: .seconds(60)) {
            logs.all.contains { $0.contains("the checkout API has not stopped after") && $0.contains("1 requests in flight: POST /v1/sessions/ses_1/attempts [req-1]") }
        }
        #expect(named, "\(logs.all)")
        inFlight.end(stuck)
        release.yield()
        try await running.value
        let lines = logs.all.filter { $0.contains("shutdown:") }
        #expect(lines.first?.contains("shutdown: stopping the checkout API: finishing the requests in flight") == true, "\(lines)")
        #expect(lines.last?.contains("shutdown: the checkout API stopped (") == true, "\(lines)")
        #expect(inFlight.describe() == "no request in flight")
    }
}
