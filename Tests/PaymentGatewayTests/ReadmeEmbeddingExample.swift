// The README's embedding example ("Embedding the gateway in a Swift app"),
// verbatim between the markers: the suite compiles it here, and
// ReadmeEmbeddingExampleTests holds the README to this file. Never run
// (it serves until SIGTERM).
import CheckoutEngine
import Foundation
import GatewayPayloads
import Logging
import PaymentGateway
import ServiceLifecycle

func readmeEmbeddingExample() async throws {
// README begin
let logger = Logger(label: "shop")
let gateway = try await PaymentGateway.open(configuration: .init(manifests: "manifests", data: ".gateway"))

// In the app's service group (the HTTP server would be another service here).
let services = ServiceGroup(configuration: .init(
    services: [gateway], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
async let running: Void = services.run()

// A checkout: a session lists what may pay it; an attempt pays it.
let session = try await gateway.createSession(
    NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "order-1001"),
    idempotencyKey: "order-1001-session")
print(session.availableMethods)            // ["amex", "applepay", "googlepay", "mada", ...]

let attempt = try await gateway.attempt(
    session: session.session.id, NewAttempt(method: "mada", instrument: ["scenario": .string("three_ds")]),
    idempotencyKey: "order-1001-attempt")
if attempt.status == .pending, let action = attempt.action {
    // Send the payer to action.url; when they come back:
    _ = try await gateway.proceed(session: session.session.id, attempt: attempt.id,
                                  PayerInput(returnParams: ["outcome": "approve"]), idempotencyKey: "order-1001-return")
}

// Follow the session's transitions live (history first, then new ones).
for try await event in try await gateway.events(ofSession: session.session.id) {
    print(event.type, event.status ?? "")
    if event.type == .sessionCompleted { break }
}

// After success: refunds (partial, repeated, never beyond what was captured).
_ = try await gateway.refund(payment: attempt.id, amount: 400, idempotencyKey: "order-1001-refund-1")
try await running
// README end
}
