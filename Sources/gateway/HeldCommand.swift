import ArgumentParser
import CheckoutEngine
import Foundation
import GatewayPayloads

/// `gateway held`: what money is held, and why.
struct HeldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "held",
        abstract: "List captures, refunds and voids sent to a provider and not settled yet: their amount is held until reconciliation settles them.")

    @OptionGroup var host: HostOptions

    @Flag(name: .long, help: "One JSON document.")
    var json = false

    func run() async throws {
        try await HostSetup.withGateway(host) { gateway in
            let held = try await gateway.heldOperations()
            if json {
                var w = JSONWriter()
                w.beginArray()
                for h in held {
                    w.beginObject()
                    w.member("paymentId", h.paymentID)
                    w.member("sessionId", h.sessionID)
                    w.member("providerId", h.providerID)
                    w.member("operation", h.operation.rawValue)
                    w.member("amount", h.amount)
                    w.member("reason", h.reason)
                    w.member("since", date: h.since)
                    w.member("nextCheckAt", date: h.nextCheckAt)
                    w.member("checks", Int64(h.checks))
                    w.member("providerKey", h.providerKey)
                    w.endObject()
                }
                w.endArray()
                print(String(decoding: w.bytes, as: UTF8.self))
                return
            }
            guard !held.isEmpty else {
                print("nothing is held: every capture, refund and void is settled")
                return
            }
            for h in held {
                print("\(h.paymentID)  \(h.operation) \(CheckoutOutput.display(h.amount)) via \(h.providerID): \(h.reason)")
                print("    since \(h.since.map(WireDate.string) ?? "-"), next check \(h.nextCheckAt.map(WireDate.string) ?? "-"), \(h.checks) checks, session \(h.sessionID)")
            }
        }
    }
}
