import Crypto
import Foundation
import GatewayAdapterSDK

/// capture, refund and void on an authorised order.
///
/// Tamara documents no idempotency key for captures or cancels, so before
/// sending one the adapter reads the order. A capture is compared with what
/// the host has recorded as captured (`alreadyCaptured`): when Tamara holds
/// at least this capture's amount more than that, an earlier try of this
/// capture landed and its answer was lost, so it is reported, not taken
/// again. That holds for partial captures too, where "what is left" would
/// happily allow a second one. (Without `alreadyCaptured`, from an older
/// host, only a fully captured order counts as the earlier try.) A void
/// retried finds the order `canceled`. Refunds carry the engine's
/// idempotency key as `merchant_refund_id`.
extension TamaraAdapter {
    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        let reference = try TamaraReference(request.providerReference)
        let order: TamaraWire.Order
        switch await lookUp(reference, for: "capture") {
        case .success(let found): order = found
        case .failure(let refusal): return refusal.result
        }
        if let refusal = Self.checkAmount(request.amount, order, reference) { return refusal }
        let status = order.status ?? ""
        let captured = order.value(order.capturedAmount)
        let firstTryLanded = request.alreadyCaptured.map { captured - $0.value >= request.amount.value }
            ?? (["fully_captured", "partially_refunded", "fully_refunded"].contains(status) && request.amount.value <= captured)
        if firstTryLanded {
            host.log(.info, "Tamara order \(reference.orderId) already holds this capture (\(captured) captured); not capturing again")
            return AdapterResult(status: .succeeded, providerReference: reference.text, amount: request.amount, providerStatus: status)
        }
        guard ["authorised", "updated", "partially_captured"].contains(status) else {
            return Self.refused(.invalidState, "order \(reference.orderId) is \(status); only an authorised order can be captured", reference, status)
        }
        guard request.amount.value <= order.capturable else {
            return Self.refused(.amountExceedsAuthorized, "capture of \(request.amount.value) exceeds the \(order.capturable) left to capture", reference, status)
        }
        let body = TamaraWire.Capture(
            orderId: reference.orderId, totalAmount: try TamaraMoney(request.amount),
            shippingInfo: TamaraWire.ShippingInfo(shippedAt: Self.timestamp(host.now), shippingCompany: shippingCompany))
        let answer = try await post("/payments/capture", body, what: "capture")
        guard answer.ok, let done = answer.decode(TamaraWire.CaptureAnswer.self) else {
            return Self.refusedBy(answer, reference, operation: "capture")
        }
        return AdapterResult(status: .succeeded, providerReference: done.captureId ?? reference.text,
                             amount: done.capturedAmount?.money ?? request.amount, providerStatus: done.status)
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        let reference = try TamaraReference(request.providerReference)
        guard request.amount.value > 0 else { return Self.refused(.invalidAmount, "amount.value must be positive", reference, nil) }
        let body = TamaraWire.Refund(totalAmount: try TamaraMoney(request.amount),
                                     comment: String((request.reason ?? "Refund \(request.paymentId)").prefix(255)),
                                     merchantRefundId: Self.refundId(request.idempotencyKey))
        let answer = try await post("/payments/simplified-refund/\(ProviderHTTPClient.pathSegment(reference.orderId))", body, what: "refund")
        guard answer.ok, let done = answer.decode(TamaraWire.RefundAnswer.self) else {
            return Self.refusedBy(answer, reference, operation: "refund")
        }
        return AdapterResult(status: .succeeded, providerReference: done.refundId ?? reference.text,
                             amount: done.refundedAmount?.money ?? request.amount, providerStatus: done.status)
    }

    func void(_ request: VoidRequest) async throws -> AdapterResult {
        let reference = try TamaraReference(request.providerReference)
        let order: TamaraWire.Order
        switch await lookUp(reference, for: "void") {
        case .success(let found): order = found
        case .failure(let refusal): return refusal.result
        }
        let status = order.status ?? ""
        let currency = order.currency ?? ""
        if status == "canceled", order.authorizedAmount != nil {
            return AdapterResult(status: .succeeded, providerReference: reference.text,
                                 amount: Money(value: order.value(order.canceledAmount), currency: currency), providerStatus: status)
        }
        guard ["authorised", "updated"].contains(status), order.value(order.capturedAmount) == 0, order.capturable > 0 else {
            return Self.refused(.invalidState, "order \(reference.orderId) is \(status); only an authorised, uncaptured order can be voided", reference, status)
        }
        let left = Money(value: order.capturable, currency: currency)
        let answer = try await post("/orders/\(ProviderHTTPClient.pathSegment(reference.orderId))/cancel", TamaraWire.Cancel(totalAmount: try TamaraMoney(left)), what: "cancel")
        guard answer.ok, let done = answer.decode(TamaraWire.CancelAnswer.self) else {
            return Self.refusedBy(answer, reference, operation: "cancel")
        }
        return AdapterResult(status: .succeeded, providerReference: done.cancelId ?? reference.text, amount: left, providerStatus: done.status)
    }

    /// A refusal before anything was asked to move.
    struct Refusal: Error { var result: AdapterResult }

    /// The order, read before an operation; a lost read refuses the operation
    /// cleanly (nothing was sent that could move money).
    func lookUp(_ reference: TamaraReference, for operation: String) async -> Result<TamaraWire.Order, Refusal> {
        do {
            return .success(try await fetch(reference.orderId))
        } catch {
            return .failure(Refusal(result: AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
                code: .providerError, message: "Tamara: reading the order failed (\(error)); the \(operation) was not sent", retryable: true))))
        }
    }

    static func checkAmount(_ amount: Money, _ order: TamaraWire.Order, _ reference: TamaraReference) -> AdapterResult? {
        guard amount.value > 0 else { return refused(.invalidAmount, "amount.value must be positive", reference, order.status) }
        guard amount.currency == order.currency else {
            return refused(.currencyMismatch, "the order is in \(order.currency ?? "?"), not \(amount.currency)", reference, order.status)
        }
        return nil
    }

    static func refused(_ code: ProblemCode, _ message: String, _ reference: TamaraReference, _ status: String?) -> AdapterResult {
        AdapterResult(status: .failed, providerReference: reference.text,
                      problem: AdapterProblem(code: code, message: "Tamara: \(message)", retryable: false, providerCode: status), providerStatus: status)
    }

    /// A 4xx answer to capture, refund or cancel, as a problem.
    static func refusedBy(_ answer: TamaraAnswer, _ reference: TamaraReference, operation: String) -> AdapterResult {
        let providerCode = answer.errorCode
        let code: ProblemCode = switch (operation, providerCode ?? "") {
        case (_, let c) where c.hasPrefix("order_status_not_allowed"): .invalidState
        case ("capture", "total_amount_invalid_limit"): .amountExceedsAuthorized
        case ("refund", "total_amount_invalid_limit"): .amountExceedsCaptured
        case (_, "order_not_found"): .unknownPayment
        case (_, "invalid_currency"): .currencyMismatch
        default: .providerError
        }
        return AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
            code: code, message: "Tamara refused the \(operation): \(answer.summary)", retryable: answer.status == 429, providerCode: providerCode),
            providerStatus: providerCode)
    }

    /// An id fit for `merchant_refund_id`: the key itself, or its SHA-256 when longer than 128 characters.
    static func refundId(_ key: String) -> String {
        guard key.count > 128 else { return key }
        return SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
