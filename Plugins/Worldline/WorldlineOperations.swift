import Foundation
import GatewayAdapterSDK

/// continue, verify, capture, refund (a refund) and void (a cancel). Reads
/// are `GET /payments/{id}/details`; moves carry the operation's idempotency
/// key as `X-GCS-Idempotence-Key`, so a retry is answered with its first
/// try's result.
extension WorldlineAdapter {
    /// The payment as it now is, with its captures and refunds.
    func read(_ id: String) async throws -> AdapterResult {
        let answer: WorldlineAnswer
        do { answer = try await client.get("/payments/\(id)/details") } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's payment \(id) could not be read: \(error.message)")
        }
        // A 404 too: a wrong base_url or merchant_id must not fail an attempt whose payment exists.
        guard answer.ok, let payment = answer.decode(WorldlineWire.Payment.self), payment.id == id else {
            throw AdapterError.outcomeUnknown("Worldline could not report payment \(id): \(answer.summary)")
        }
        return WorldlineStatus.result(payment)
    }

    /// continue: the payer is back from 3-D Secure (`paymentId`, `RETURNMAC`
    /// added to the return URL). Only the payment, read again, decides:
    /// the return's parameters (even a `paymentId` naming another payment)
    /// are not believed, and so cannot end the attempt either.
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        try await read(try Self.paymentID(request.providerReference))
    }

    /// verify: the payment as it now is; for a create whose answer was lost,
    /// the create replayed under its idempotence key (the first try's answer).
    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        if let reference = request.providerReference { return try await read(try Self.paymentID(reference)) }
        let known = lostCreates.lookup(request.paymentId, now: host.now)
        if let id = known.id { return try await read(id) }
        guard let create = known.create else {
            throw AdapterError.outcomeUnknown("Worldline: this attempt has no payment id (the create's answer was lost) and its create is no longer "
                + "held to replay; its webhook, or a person looking up merchantReference \(request.paymentId), settles it")
        }
        return try await self.create(create, paymentId: request.paymentId, replay: true)
    }

    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("a capture takes a positive amount") }
        return try await move(.capture, id: id, request: request, body: WorldlineWire.Capture(amount: request.amount.value, isFinal: false))
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("a refund takes a positive amount") }
        return try await move(.refund, id: id, request: request,
                              body: WorldlineWire.Refund(amountOfMoney: .init(amount: request.amount.value, currencyCode: request.amount.currency)))
    }

    func void(_ request: VoidRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        let sent: WorldlineAnswer
        do {
            sent = try await client.post("/payments/\(id)/cancel", [String: String](), idempotenceKey: request.idempotencyKey)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's cancel got no answer: \(error.message)")
        }
        let now = try await read(id)
        // Cancelled, or captured with the rest released (a cancel after partial captures): the void holds.
        if now.providerStatus == "CANCELLED" || (sent.ok && now.providerStatus == "CAPTURED") {
            return AdapterResult(status: .succeeded, providerReference: id, providerStatus: now.providerStatus, totals: now.totals)
        }
        guard !sent.ok else { throw AdapterError.outcomeUnknown("Worldline accepted the cancel but reports the payment \(now.providerStatus ?? "?")") }
        return try refusal(of: "cancel", sent, id: id, exceeds: .invalidState)
    }

    enum Move: String {
        case capture, refund
        /// The answer statuses that mean the money moved (or is moving, and cannot be undone by this request).
        var done: Set<String> { self == .capture ? ["CAPTURED", "CAPTURE_REQUESTED"] : ["REFUNDED", "REFUND_REQUESTED"] }
        var exceeds: ProblemCode { self == .capture ? .amountExceedsAuthorized : .amountExceedsCaptured }
    }

    /// A capture or refund under the operation's idempotency key. Only an
    /// answer that says the money moved is `succeeded`; a refusal is believed
    /// only after a read shows this move did not land (a retry of a lost
    /// first try may be refused for a reason that arose since).
    private func move(_ move: Move, id: String, request: AmountRequest, body: some Encodable & Sendable) async throws -> AdapterResult {
        let name = move.rawValue
        let sent: WorldlineAnswer
        do {
            sent = try await client.post("/payments/\(id)/\(name)", body, idempotenceKey: request.idempotencyKey)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's \(name) got no answer: \(error.message); a retry under the same key is answered, not repeated")
        }
        if sent.ok {
            guard let status = sent.decode(WorldlineWire.OperationAnswer.self)?.status, move.done.contains(status) else {
                throw AdapterError.outcomeUnknown("Worldline's \(name) answered \(sent.summary) with a status this adapter does not take as done")
            }
            var result = try await read(id)
            result.status = .succeeded
            result.problem = nil
            result.amount = request.amount
            return result
        }
        // Refused: did this move land anyway (an earlier try under the same key)?
        let now = try await read(id)
        let before = (move == .capture ? request.alreadyCaptured : request.alreadyRefunded)?.value
        let total = move == .capture ? now.totals?.captured.value : now.totals?.refunded.value
        if let before, let total, total >= before + request.amount.value {
            return AdapterResult(status: .succeeded, providerReference: id, amount: request.amount, providerStatus: now.providerStatus, totals: now.totals)
        }
        guard before != nil, total != nil else {
            throw AdapterError.outcomeUnknown("Worldline refused the \(name) (\(sent.summary)) and what it moved before cannot be compared")
        }
        return try refusal(of: name, sent, id: id, exceeds: move.exceeds)
    }

    /// Worldline's codes for "a request under this idempotence key is still
    /// being processed": the outcome is not known yet.
    static let inFlightCodes: Set<String> = ["30001002", "1409"]

    /// A refused capture, refund or cancel the payment shows did not land.
    /// Only a refusal of the request itself is final; a 409 on the key, a
    /// 404, a 5xx or an unreadable answer may hide an earlier try still landing.
    private func refusal(of name: String, _ sent: WorldlineAnswer, id: String, exceeds: ProblemCode) throws -> AdapterResult {
        let error = sent.error
        let code = error?.errorCode ?? error?.id
        switch sent.status {
        case 400 where (error?.id ?? "").contains("EXCEEDS"):
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: exceeds, message: "Worldline refused the \(name): \(sent.summary)", retryable: false, providerCode: code))
        case 400, 401, 403:
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: .providerError, message: "Worldline refused the \(name): \(sent.summary)", retryable: false, providerCode: code))
        // 30001002 (and the older 1409): a request under this key is still running.
        case 409 where !Self.inFlightCodes.contains(error?.errorCode ?? ""):
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: .invalidState, message: "Worldline refused the \(name) in the payment's state: \(sent.summary)", retryable: false, providerCode: code))
        default:
            throw AdapterError.outcomeUnknown("Worldline's \(name) answered \(sent.summary); a retry under the same key is answered, not repeated")
        }
    }
}
