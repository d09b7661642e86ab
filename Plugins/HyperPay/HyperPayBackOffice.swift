import Crypto
import Foundation
import GatewayAdapterSDK

/// capture, refund and void: OPPWA's back-office CP, RF and RV.
///
/// CP and RV reference the checkout's payment (the PA, or the DB for RV).
/// A refund references what took the money: the DB of an automatic capture,
/// or the CPs of a pre-authorisation, since OPPWA refuses an RF on a PA
/// (`700.300.100`, invalid type). The host lists the confirmed captures in
/// the request (``AmountRequest/captures``); the refund is spread over them
/// (``refundAgainstCaptures(_:_:)``).
extension HyperPayAdapter {
    /// CP, RF or RV on the checkout's payment, with the engine's idempotency
    /// key as `merchantTransactionId` (a retry gets the first answer).
    func backOffice(_ type: String, _ text: String, amount: Money?, key: String) async throws -> AdapterResult {
        let reference = try HyperPayReference(text)
        let found: HyperPayAnswer
        do {
            found = try await query(reference)
        } catch AdapterError.outcomeUnknown(let why) {
            // Only the read was lost: nothing was asked to move.
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: .providerError, message: "\(why); the \(Self.operationName(type)) was not sent", retryable: true))
        }
        guard found.status == 200, let paymentId = found["id"], let code = found.code else {
            // Nothing was asked to move yet: a clean failure, whatever the reason.
            let (code, retryable): (ProblemCode, Bool) = switch found.status {
            case 200: (.invalidState, false)
            case 400, 404: (.unknownPayment, false)
            default: (.providerError, true)
            }
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: code, message: "HyperPay has no paid payment for checkout \(reference.checkoutId.prefix(64)) to \(Self.operationName(type)): \(found.summary)",
                retryable: retryable, providerCode: found.code), providerStatus: found.code)
        }
        let currency = found["currency"] ?? ""
        if let amount {
            guard amount.value > 0, (try? amount.decimalString()) != nil else {
                return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(code: .invalidAmount, message: "amount must be positive in a known currency", retryable: false))
            }
            guard (try? Self.amountText(amount)) != nil else {
                return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(code: .invalidAmount, message: Self.twoDecimals(amount), retryable: false))
            }
            guard amount.currency == currency else {
                return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(code: .currencyMismatch, message: "the payment is in \(currency)", retryable: false))
            }
        }
        guard HyperPayResultClass(code) == .success || HyperPayResultClass(code) == .review else {
            return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
                code: .invalidState, message: "the payment's result is \(code) \(found.resultDescription); there is nothing to \(Self.operationName(type))", retryable: false),
                providerStatus: code)
        }
        return try await send(type, on: paymentId, entity: entity(reference.kind), amount: amount, key: key, reference: text)
    }

    /// refund: against the captures the host lists, or, without any (a DB,
    /// captured at once), against the checkout's payment.
    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        guard let captures = request.captures, !captures.isEmpty else {
            return try await backOffice("RF", request.providerReference, amount: request.amount, key: request.idempotencyKey)
        }
        return try await refundAgainstCaptures(request, captures)
    }

    /// One RF per capture the refund draws on (``refundPlan(amount:captures:alreadyRefunded:key:)``),
    /// oldest first, each under its own `merchantTransactionId` derived from
    /// the request's key and the capture, so a retry of the whole refund
    /// asks for each part under the same id and a part already made is
    /// answered from the transaction reports, not sent again.
    ///
    /// - Every part refunded: `succeeded`, the sum.
    /// - A part with no answer: the outcome is unknown (thrown); the parts
    ///   before it stand, and a retry completes the rest.
    /// - A part pending: `pending`; a retry asks again.
    /// - A part refused: `failed` when it is the first (nothing moved);
    ///   otherwise `succeeded` with what the parts before it refunded, so the
    ///   host's books hold what OPPWA's do.
    func refundAgainstCaptures(_ request: AmountRequest, _ captures: [CaptureReference]) async throws -> AdapterResult {
        let reference = try HyperPayReference(request.providerReference)
        let plan = try Self.refundPlan(amount: request.amount, captures: captures, alreadyRefunded: request.alreadyRefunded,
                                       key: request.idempotencyKey)
        var refunded: Int64 = 0
        var last: AdapterResult?
        for part in plan {
            let result = try await send("RF", on: part.captureReference, entity: entity(reference.kind), amount: part.amount,
                                        key: part.transactionId, reference: request.providerReference)
            switch result.status {
            case .succeeded:
                refunded += result.amount?.value ?? part.amount.value
                last = result
            case .pending:
                return AdapterResult(status: .pending, providerReference: result.providerReference, providerStatus: result.providerStatus)
            default:
                guard refunded > 0, let last else { return result }
                host.log(.warning, "HyperPay refunded \(refunded) of the \(request.amount.value) asked, then refused the RF on capture \(part.captureReference.prefix(64)): \(result.problem?.message ?? result.status.rawValue)")
                return AdapterResult(status: .succeeded, providerReference: last.providerReference,
                                     amount: Money(value: refunded, currency: request.amount.currency), problem: result.problem,
                                     providerStatus: last.providerStatus)
            }
        }
        return AdapterResult(status: .succeeded, providerReference: last?.providerReference,
                             amount: Money(value: refunded, currency: request.amount.currency), providerStatus: last?.providerStatus)
    }

    /// One RF of a refund spread over captures.
    struct RefundPart: Equatable, Sendable {
        var captureReference: String
        var amount: Money
        var transactionId: String
    }

    /// Where a refund of `amount` is taken from: the captures oldest first,
    /// after what `alreadyRefunded` used up of them in the same order. Throws
    /// ``AdapterError/invalidRequest(_:)`` (nothing is sent) when the
    /// captures do not add up: another currency, a repeated reference, more
    /// already refunded than captured, or less left than asked.
    static func refundPlan(amount: Money, captures: [CaptureReference], alreadyRefunded: Money?, key: String) throws -> [RefundPart] {
        guard amount.value > 0, (try? amount.decimalString()) != nil else {
            throw AdapterError.invalidRequest("a refund amount must be positive in a known currency")
        }
        _ = try amountText(amount)
        guard captures.allSatisfy({ $0.amount.currency == amount.currency && $0.amount.value > 0 && !$0.providerReference.isEmpty }),
              alreadyRefunded.map({ $0.currency == amount.currency && $0.value >= 0 }) ?? true else {
            throw AdapterError.invalidRequest("captures and alreadyRefunded must be positive amounts in the refund's currency \(amount.currency), each capture with its providerReference")
        }
        guard Set(captures.map(\.providerReference)).count == captures.count else {
            throw AdapterError.invalidRequest("captures list the same providerReference twice")
        }
        var spent = alreadyRefunded?.value ?? 0
        var left = amount.value
        var plan: [RefundPart] = []
        for capture in captures {
            let used = min(spent, capture.amount.value)
            spent -= used
            let take = min(capture.amount.value - used, left)
            guard take > 0 else { continue }
            left -= take
            plan.append(RefundPart(captureReference: capture.providerReference, amount: Money(value: take, currency: amount.currency),
                                   transactionId: transactionId("\(key)|RF|\(capture.providerReference)")))
        }
        // Each part within OPPWA's two decimals before any is sent (a capture recorded in fils may not split so).
        for part in plan { _ = try amountText(part.amount) }
        guard spent == 0, left == 0 else {
            let total = captures.reduce(Int64(0)) { $0 + $1.amount.value }
            throw AdapterError.invalidRequest("the captures listed (\(total) captured, \(alreadyRefunded?.value ?? 0) already refunded) leave less than the \(amount.value) asked to refund")
        }
        return plan
    }

    /// One back-office call on payment `paymentId`, its answer as a result.
    /// No answer, a 5xx, or an answer without a result code: the outcome is
    /// unknown (thrown).
    ///
    /// OPPWA documents no de-duplication of CP/RF/RV by
    /// `merchantTransactionId`, so a retry after a lost answer could move
    /// money twice. Before sending, the transaction reports are asked for a
    /// call already made under this key on this payment
    /// (``earlier(_:on:entity:transactionId:amount:reference:)``): one found is
    /// the answer, nothing is sent again.
    func send(_ type: String, on paymentId: String, entity: String, amount: Money?, key: String, reference text: String) async throws -> AdapterResult {
        let transactionId = Self.transactionId(key)
        if let made = try await earlier(type, on: paymentId, entity: entity, transactionId: transactionId, amount: amount, reference: text) {
            return made
        }
        var form = [("entityId", entity), ("paymentType", type), ("merchantTransactionId", transactionId)]
        if let amount {
            form += [("amount", try Self.amountText(amount)), ("currency", amount.currency)]
        }
        let answer: HyperPayAnswer
        do {
            answer = HyperPayAnswer(try await client.send("POST", "/v1/payments/\(ProviderHTTPClient.pathSegment(paymentId))", .form(form)))
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) got no answer: \(error.message); retry with the same key")
        }
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) answered HTTP \(answer.status): \(answer.summary)") }
        return try result(type, answer, amount: amount, reference: text)
    }

    /// The CP/RF/RV made earlier under `transactionId` on payment
    /// `paymentId`, as OPPWA's transaction reports hold it
    /// (`GET /v1/query?entityId=…&merchantTransactionId=…`), or nil when they
    /// hold none (404 `700.400.580`). Reports that cannot be read leave the
    /// outcome unknown, with nothing sent: sending blind could move money twice.
    func earlier(_ type: String, on paymentId: String, entity: String, transactionId: String, amount: Money?,
                 reference text: String) async throws -> AdapterResult? {
        let what = Self.operationName(type)
        let answer: HyperPayAnswer
        do {
            answer = HyperPayAnswer(try await client.send("GET", "/v1/query", .form([("entityId", entity), ("merchantTransactionId", transactionId)])))
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("HyperPay's transaction reports could not say whether a \(what) under this key was made (\(error.message)); nothing sent, retry with the same key")
        }
        // Only OPPWA's own "cannot find transaction" says none: a bare 404 (a proxy, a wrong path) says nothing.
        if answer.code == "700.400.580" { return nil }
        guard answer.status == 200, case .array(let payments)? = answer.body["payments"] else {
            throw AdapterError.outcomeUnknown("HyperPay's transaction reports answered \(answer.summary) for this key; nothing sent, retry with the same key")
        }
        let made = try payments.filter { $0["paymentType"]?.stringValue == type && $0["referencedId"]?.stringValue == paymentId }
            .map { try result(type, HyperPayAnswer(status: 200, body: $0), amount: amount, reference: text) }
        // Any try that moved money is the answer; then one still pending; then a final refusal.
        // Only retryable refusals (throttled, a communication error) mean nothing stands: send again.
        let standing = made.first { $0.status == .succeeded } ?? made.first { $0.status == .pending }
            ?? made.last { $0.status == .failed && $0.problem?.retryable == false }
        if standing != nil {
            host.log(.info, "HyperPay already holds the \(what) under this key on \(paymentId.prefix(64)): answered from its transaction reports, nothing sent again")
        }
        return standing
    }

    /// A back-office answer (or a transaction the reports hold) as a result.
    func result(_ type: String, _ answer: HyperPayAnswer, amount: Money?, reference text: String) throws -> AdapterResult {
        guard let done = answer.code else {
            throw AdapterError.outcomeUnknown("HyperPay's \(Self.operationName(type)) answered HTTP \(answer.status) without a result code")
        }
        switch HyperPayResultClass(done) {
        case .success, .review:
            let moved = amount.flatMap { asked in answer["amount"].flatMap { try? Money(decimal: $0, currency: asked.currency) } ?? asked }
            return AdapterResult(status: .succeeded, providerReference: answer["id"], amount: moved, providerStatus: done)
        case .pending, .pendingForDays:
            return AdapterResult(status: .pending, providerReference: answer["id"], providerStatus: done)
        case .failure:
            break
        }
        let (classified, mapped) = HyperPayResultClass.failure(done, description: answer.resultDescription)
        // "timeout, uncertain result" (900.100.300): the acquirer may yet act on it.
        if classified == .pending { return AdapterResult(status: .pending, providerReference: answer["id"], providerStatus: done) }
        let problemCode: ProblemCode = switch done {
        case "700.400.100": .amountExceedsAuthorized
        case "700.400.200": .amountExceedsCaptured
        case "700.400.300", "700.300.100": .invalidState
        default: mapped.code
        }
        return AdapterResult(status: .failed, providerReference: text, problem: AdapterProblem(
            code: problemCode, message: "HyperPay refused the \(Self.operationName(type)): \(answer.summary)",
            retryable: mapped.retryable && !done.hasPrefix("700."), providerCode: done),
            providerStatus: done)
    }

    static func operationName(_ type: String) -> String {
        switch type {
        case "CP": "capture"
        case "RF": "refund"
        default: "reversal"
        }
    }

    /// An id fit for `merchantTransactionId` (8 to 255 characters, OPPWA's
    /// `[\s\S]{8,255}`): the id itself, or its SHA-256 in hex when longer
    /// or shorter.
    static func transactionId(_ id: String) -> String {
        guard !(8...255).contains(id.count) else { return id }
        return SHA256.hash(data: Data(id.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
