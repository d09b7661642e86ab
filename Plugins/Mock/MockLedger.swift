import GatewayAdapterSDK

/// One payment as the mock gateway remembers it.
struct MockPayment: Sendable {
    var paymentId: String
    var reference: String
    var scenario: MockScenario
    var status: PaymentStatus
    /// What was approved (may be less than asked: partial approval).
    var approved: Money
    var captured: Int64 = 0
    var refunded: Int64 = 0
    var otpMisses = 0
    var createdAtNanoseconds: UInt64
    var problem: AdapterProblem?
    var action: PaymentAction?
}

/// The mock gateway's memory: payments by reference, and the answer already
/// given to each idempotency key (a replay gets the same answer, as at a real
/// PSP). Webhook de-duplication is the host's job, by `eventId`.
struct MockLedger: Sendable {
    var payments: [String: MockPayment] = [:]
    var answers: [String: AdapterResult] = [:]
}
