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
        if answer.status == 404 {
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: "unknown_payment", message: "Worldline does not know payment \(id)", retryable: false))
        }
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
        let now = host.now
        guard let lost = lostCreates.withLock({ $0[request.paymentId] }), lost.until > now else {
            throw AdapterError.outcomeUnknown("Worldline: this attempt has no payment id (the create's answer was lost) and its create is no longer "
                + "held to replay; its webhook, or a person looking up merchantReference \(request.paymentId), settles it")
        }
        return try await create(lost, paymentId: request.paymentId)
    }

    func capture(_ request: AmountRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("a capture takes a positive amount") }
        return try await move("capture", id: id, request: request,
                              body: WorldlineWire.Capture(amount: request.amount.value, isFinal: false), exceeds: "amount_exceeds_authorized")
    }

    func refund(_ request: AmountRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("a refund takes a positive amount") }
        return try await move("refund", id: id, request: request,
                              body: WorldlineWire.Refund(amountOfMoney: .init(amount: request.amount.value, currencyCode: request.amount.currency)),
                              exceeds: "amount_exceeds_captured")
    }

    func void(_ request: VoidRequest) async throws -> AdapterResult {
        let id = try Self.paymentID(request.providerReference)
        let sent: WorldlineAnswer
        do {
            sent = try await client.post("/payments/\(id)/cancel", [String: String](), idempotenceKey: request.idempotencyKey)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's cancel got no answer: \(error.message)")
        }
        if sent.ok {
            var result = try await read(id)
            if result.status == .cancelled || result.status == .succeeded { result.status = .succeeded; result.problem = nil }
            return result
        }
        return try refusal(of: "cancel", sent, id: id, exceeds: "invalid_state")
    }

    private func move(_ name: String, id: String, request: AmountRequest, body: some Encodable & Sendable, exceeds: String) async throws -> AdapterResult {
        let sent: WorldlineAnswer
        do {
            sent = try await client.post("/payments/\(id)/\(name)", body, idempotenceKey: request.idempotencyKey)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Worldline's \(name) got no answer: \(error.message); a retry under the same key is answered, not repeated")
        }
        guard sent.ok else { return try refusal(of: name, sent, id: id, exceeds: exceeds) }
        guard let answer = sent.decode(WorldlineWire.OperationAnswer.self), answer.status != nil else {
            throw AdapterError.outcomeUnknown("Worldline's \(name) answered a document this adapter cannot read")
        }
        if answer.status == "REJECTED_CAPTURE" || answer.status == "REJECTED" {
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: "provider_error", message: "Worldline rejected the \(name) (\(answer.status ?? ""))", retryable: false,
                providerCode: answer.statusOutput?.errors?.first?.errorCode), providerStatus: answer.status)
        }
        var result = try await read(id)
        result.status = .succeeded
        result.problem = nil
        result.amount = request.amount
        return result
    }

    /// A refused capture, refund or cancel. Only a refusal that names the
    /// request's own fault proves nothing moved; a 409 on the key, a 5xx or
    /// an unreadable answer may hide an earlier try still landing.
    private func refusal(of name: String, _ sent: WorldlineAnswer, id: String, exceeds: String) throws -> AdapterResult {
        let error = sent.error
        let code = error?.errorCode ?? error?.id
        switch sent.status {
        case 400 where (error?.id ?? "").contains("EXCEEDS"):
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: exceeds, message: "Worldline refused the \(name): \(sent.summary)", retryable: false, providerCode: code))
        case 400, 401, 403:
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: "provider_error", message: "Worldline refused the \(name): \(sent.summary)", retryable: false, providerCode: code))
        case 404:
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: "unknown_payment", message: "Worldline does not know payment \(id)", retryable: false, providerCode: code))
        case 409 where error?.errorCode != "1409":
            return AdapterResult(status: .failed, providerReference: id, problem: AdapterProblem(
                code: "invalid_state", message: "Worldline refused the \(name) in the payment's state: \(sent.summary)", retryable: false, providerCode: code))
        default:
            throw AdapterError.outcomeUnknown("Worldline's \(name) answered \(sent.summary); a retry under the same key is answered, not repeated")
        }
    }
}
