import CheckoutEngine
import GatewayPayloads
import Synchronization

/// A provider's books, as a real gateway keeps them: what it authorized,
/// captured, refunded and voided per payment, and the answer it gave each
/// idempotency key (a retry under a key is answered from there, never applied
/// twice). Tests script *how* it answers; the books say what really happened.
public final class ProviderBooks: Sendable {
    public init() {}

    public struct Payment: Sendable, Equatable {
        public var authorized: Int64 = 0
        public var captured: Int64 = 0
        public var refunded: Int64 = 0
        public var voided = false
        public var automatic = true
    }
    private let state = Mutex<(payments: [String: Payment], answers: [String: AdapterResult], charges: Int)>(([:], [:], 0))

    public var payments: [String: Payment] { state.withLock { $0.payments } }
    public func payment(_ id: String) -> Payment? { state.withLock { $0.payments[id] } }
    /// Whether the provider already answered idempotency key `key` (a retry
    /// under it is answered from its books, whatever else happens).
    public func hasAnswer(_ key: String) -> Bool { state.withLock { $0.answers[key] != nil } }

    /// Acts on `call` as the provider would and returns its true answer.
    public func act(_ call: ProviderCall) -> AdapterResult {
        state.withLock { s in
            switch call {
            case .authorize(let r):
                if let known = s.answers[r.idempotencyKey] { return known }
                var p = Payment(authorized: r.amount.value, automatic: r.capture != .manual)
                if p.automatic { p.captured = r.amount.value }
                s.payments[r.paymentId] = p
                s.charges += 1
                let result = AdapterResult(status: r.capture == .manual ? .authorized : .succeeded, providerReference: "ref-\(r.paymentId)", amount: r.amount)
                s.answers[r.idempotencyKey] = result
                return result
            case .proceed(let r):
                return AdapterResult(status: .succeeded, providerReference: r.providerReference)
            case .verify(let r):
                guard let p = s.payments[r.paymentId] else {
                    return AdapterResult(status: .failed, problem: AdapterProblem(code: .paymentFailed, message: "no such payment", retryable: false))
                }
                return AdapterResult(status: p.automatic ? .succeeded : .authorized,
                                     providerReference: "ref-\(r.paymentId)", amount: Money(value: p.authorized, currency: "SAR"))
            case .capture(let r), .refund(let r):
                if let known = s.answers[r.idempotencyKey] { return known }
                guard var p = s.payments[r.paymentId] else { return Self.refused("no such payment") }
                let isCapture = if case .capture = call { true } else { false }
                if isCapture {
                    guard !p.voided, r.amount.value <= p.authorized - p.captured else { return Self.refused("over-capture") }
                    p.captured += r.amount.value
                } else {
                    guard r.amount.value <= p.captured - p.refunded else { return Self.refused("over-refund") }
                    p.refunded += r.amount.value
                }
                s.payments[r.paymentId] = p
                let result = AdapterResult(status: .succeeded, providerReference: "\(r.idempotencyKey)-done", amount: r.amount)
                s.answers[r.idempotencyKey] = result
                return result
            case .void(let r):
                if let known = s.answers[r.idempotencyKey] { return known }
                guard var p = s.payments[r.paymentId], p.captured == 0, !p.voided else { return Self.refused("cannot void") }
                p.voided = true
                s.payments[r.paymentId] = p
                let result = AdapterResult(status: .succeeded, providerReference: "\(r.idempotencyKey)-done")
                s.answers[r.idempotencyKey] = result
                return result
            }
        }
    }

    public static func refused(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(code: .paymentFailed, message: why, retryable: false))
    }
}

