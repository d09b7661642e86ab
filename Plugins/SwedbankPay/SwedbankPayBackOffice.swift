import Crypto
import Foundation
import GatewayAdapterSDK

/// capture, refund (a reversal) and void (a cancellation, or an abort
/// before the payer paid). Each move carries a `payeeReference` made from
/// the request's idempotency key, so a retry finds the move its first try
/// made (in the order's transactions) instead of making another.
extension SwedbankPayAdapter {
    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        try await move(request, rel: "capture", type: "Capture", remaining: \.remainingCaptureAmount, exceeds: .amountExceedsAuthorized)
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        try await move(request, rel: "reversal", type: "Reversal", remaining: \.remainingReversalAmount, exceeds: .amountExceedsCaptured)
    }

    private func move(_ request: AmountRequest, rel: String, type: String, remaining: KeyPath<SwedbankPayWire.Order, Int64?>,
                      exceeds: ProblemCode) async throws -> AdapterResult {
        guard let reference = SwedbankPayReference(request.providerReference) else {
            throw AdapterError.invalidRequest("providerReference is not a Swedbank Pay payment order")
        }
        let payee = Self.moveReference(request.idempotencyKey)
        do {
            let read = try await client.order(reference.orderID)
            guard read.ok, let answer = read.decode(SwedbankPayWire.OrderAnswer.self), let order = answer.paymentOrder else {
                throw AdapterError.internal("Swedbank Pay could not report the order before the \(rel): \(read.summary); nothing was moved")
            }
            guard request.amount.currency == order.currency else {
                throw AdapterError.invalidRequest("the \(rel) is in \(request.amount.currency.prefix(8)), the order in \(order.currency ?? "?")")
            }
            if (order.financialTransactions?.financialTransactionsList ?? []).contains(where: { $0.payeeReference == payee && $0.type == type }) {
                return Self.moved(order, reference: reference, amount: request.amount)
            }
            guard let operation = answer.operations?.named(rel) else {
                return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                    code: .invalidState, message: "Swedbank Pay's order (\(order.status ?? "?")) offers no \(rel) now", retryable: false),
                    providerStatus: order.status)
            }
            guard request.amount.value > 0, request.amount.value <= order[keyPath: remaining] ?? 0 else {
                return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                    code: exceeds, message: "Swedbank Pay: \(request.amount.value) is more than the \(order[keyPath: remaining] ?? 0) left to \(rel)",
                    retryable: false), providerStatus: order.status)
            }
            let sent = try await client.follow(operation, SwedbankPayWire.Transaction3(transaction: .init(
                description: String((request.reason ?? "\(type) \(request.paymentId)").prefix(40)), amount: request.amount.value, vatAmount: 0,
                payeeReference: payee)))
            if sent.ok, let after = sent.decode(SwedbankPayWire.OrderAnswer.self)?.paymentOrder {
                return Self.moved(after, reference: reference, amount: request.amount)
            }
            // Refused: read again, in case an earlier try under this key landed (or is landing).
            let reread = try await client.order(reference.orderID)
            if reread.ok, let again = reread.decode(SwedbankPayWire.OrderAnswer.self)?.paymentOrder,
               (again.financialTransactions?.financialTransactionsList ?? []).contains(where: { $0.payeeReference == payee && $0.type == type }) {
                return Self.moved(again, reference: reference, amount: request.amount)
            }
            // Only a refusal of the caller's credentials proves nothing moved; any other may hide an earlier try in flight.
            if sent.status == 401 || sent.status == 403 {
                return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                    code: .providerError, message: "Swedbank Pay refused the \(rel): \(sent.summary)", retryable: false,
                    providerCode: sent.problem?.name), providerStatus: order.status)
            }
            throw AdapterError.outcomeUnknown("Swedbank Pay's \(rel) answered \(sent.summary); an earlier try under this key may still land")
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Swedbank Pay's \(rel) got no answer: \(error.message)")
        }
    }

    static func moved(_ order: SwedbankPayWire.Order, reference: SwedbankPayReference, amount: Money) -> AdapterResult {
        AdapterResult(status: .succeeded, providerReference: reference.text, amount: amount, providerStatus: order.status, totals: totals(order))
    }

    /// 30 letters and digits from SHA-256 of the idempotency key.
    static func moveReference(_ key: String) -> String {
        let digest = SHA256.hash(data: Data(key.utf8))
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var bits = 0, value = 0, out = ""
        for byte in digest {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5, out.count < 30 {
                out.append(alphabet[(value >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        return out
    }

    func void(_ request: VoidRequest) async throws -> AdapterResult {
        guard let reference = SwedbankPayReference(request.providerReference) else {
            throw AdapterError.invalidRequest("providerReference is not a Swedbank Pay payment order")
        }
        do {
            let read = try await client.order(reference.orderID)
            guard read.ok, let answer = read.decode(SwedbankPayWire.OrderAnswer.self), let order = answer.paymentOrder else {
                throw AdapterError.internal("Swedbank Pay could not report the order before the void: \(read.summary); nothing was changed")
            }
            if order.status == "Cancelled" || order.status == "Aborted" {
                return AdapterResult(status: .succeeded, providerReference: reference.text, providerStatus: order.status, totals: Self.totals(order))
            }
            let (operation, body): (SwedbankPayWire.Operation?, JSONValue) = order.status == "Initialized"
                ? (answer.operations?.named("abort"), .object(["paymentorder": .object(["operation": .string("Abort"), "abortReason": .string("CancelledByMerchant")])]))
                : (answer.operations?.named("cancel"), .object(["transaction": .object([
                    "description": .string("Void \(request.paymentId)".prefix(40).description),
                    "payeeReference": .string(Self.moveReference(request.idempotencyKey))])]))
            guard let operation else {
                return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                    code: .invalidState, message: "Swedbank Pay's order (\(order.status ?? "?")) cannot be voided: something was captured", retryable: false),
                    providerStatus: order.status)
            }
            let sent = try await client.follow(operation, body)
            guard sent.ok, let after = sent.decode(SwedbankPayWire.OrderAnswer.self)?.paymentOrder else {
                throw AdapterError.outcomeUnknown("Swedbank Pay's void answered \(sent.summary)")
            }
            return AdapterResult(status: .succeeded, providerReference: reference.text, providerStatus: after.status, totals: Self.totals(after))
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Swedbank Pay's void got no answer: \(error.message)")
        }
    }
}
