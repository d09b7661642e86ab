import Foundation
import GatewayPayloads

/// A capture, refund or void sent to a provider and not settled yet: its
/// amount is held back from the payment until reconciliation (or a retry
/// under the same key) settles it. What ops see in `gateway held`.
public struct HeldOperation: Sendable, Equatable {
    public var paymentID: String
    public var sessionID: String
    public var providerID: String
    public var operation: PaymentOperation
    public var amount: Money
    /// Sent and unanswered, outcome unknown (and why), or pending at the provider.
    public var reason: String
    public var since: Date?
    public var nextCheckAt: Date?
    public var checks: Int
    /// The provider idempotency key it is sent under, every time.
    public var providerKey: String
}

extension Checkout {
    /// Every operation held now, the earliest due first.
    public func heldOperations(limit: Int = 500) async throws(Problem) -> [HeldOperation] {
        try await guarded {
            var held: [HeldOperation] = []
            for ref in try await store.heldPayments(limit: limit) {
                let attempt = try await load(ref.sessionID).attempt(ref.attemptID)
                guard let balance = attempt.balance else { continue }
                for (key, operation) in balance.inFlight {
                    held.append(HeldOperation(
                        paymentID: attempt.id, sessionID: ref.sessionID, providerID: attempt.providerID, operation: operation.operation,
                        amount: Money(value: operation.amount, currency: balance.authorized.currency), reason: operation.reason ?? "held",
                        since: operation.since, nextCheckAt: operation.nextCheckAt, checks: operation.checks, providerKey: key))
                }
            }
            return held.sorted { ($0.nextCheckAt ?? .distantPast, $0.paymentID) < ($1.nextCheckAt ?? .distantPast, $1.paymentID) }
        }
    }
}
