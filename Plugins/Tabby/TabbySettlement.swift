import Foundation
import GatewayAdapterSDK

/// continue and verify: read the payment, and capture it when the session
/// asked for automatic capture.
extension TabbyAdapter {
    /// The payer came back. Their parameters are only a hint: the payment is
    /// read from Tabby. The one thing the hint decides is how an EXPIRED
    /// payment is reported: after a return through the cancel URL
    /// (`tabby_return=cancel`) as `cancelled` by the payer, otherwise as
    /// `failed`, `expired` (neither charged anything).
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        let reference = try TabbyReference(request.providerReference)
        let cancelled = request.returnParams?["tabby_return"] == "cancel"
        return try await settle(reference, hostPaymentId: request.paymentId, payerCancelled: cancelled)
    }

    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        guard let text = request.providerReference else { return Self.notCreated("the attempt has no Tabby payment") }
        return try await settle(try TabbyReference(text), hostPaymentId: request.paymentId, payerCancelled: false)
    }

    /// Where the payment stands, after capturing an AUTHORIZED one in full
    /// when `reference.capture` is automatic (`reference_id`: the host's
    /// payment id, so a racing continue, verify and webhook capture once).
    func settle(_ reference: TabbyReference, hostPaymentId: String, payerCancelled: Bool) async throws -> AdapterResult {
        guard let payment = try await client.payment(reference) else { return Self.unknown(reference) }
        guard payment.status == "AUTHORIZED", reference.capture == .automatic else {
            return Self.classify(payment, reference, payerCancelled: payerCancelled)
        }
        let left = payment.total - payment.captured
        let capture = TabbyWire.MovementRequest(amount: try Money(value: left, currency: payment.currency ?? "").decimalString(),
                                                referenceId: hostPaymentId)
        let answer: TabbyAnswer
        do {
            answer = try await client.send("POST", "/api/v2/payments/\(reference.paymentId)/captures", region: reference.region, capture)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Tabby's capture of payment \(reference.paymentId) got no answer: \(error.message)")
        }
        if answer.status >= 500 { throw AdapterError.outcomeUnknown("Tabby's capture of payment \(reference.paymentId) answered \(answer.summary)") }
        if answer.ok, let captured = answer.decode(TabbyWire.Payment.self), captured.status != nil {
            return Self.classify(captured, reference, payerCancelled: false)
        }
        host.log(.info, "Tabby refused to capture payment \(reference.paymentId): \(answer.summary); reading it again")
        guard let again = try await client.payment(reference) else { return Self.unknown(reference) }
        return Self.classify(again, reference, payerCancelled: false)
    }

    /// Every payment status Tabby documents, as a result.
    static func classify(_ payment: TabbyWire.Payment, _ reference: TabbyReference, payerCancelled: Bool) -> AdapterResult {
        let status = payment.status ?? ""
        let currency = payment.currency ?? ""
        let said = "Tabby payment \(reference.paymentId) is \(status)"
        func problem(_ result: PaymentStatus, _ code: ProblemCode, retryable: Bool, elsewhere: Bool, _ message: String) -> AdapterResult {
            AdapterResult(status: result, providerReference: reference.text, problem: AdapterProblem(
                code: code, message: message, retryable: retryable, safeToRetryElsewhere: elsewhere, providerCode: status), providerStatus: status)
        }
        switch status {
        case "CREATED":
            // The payer has not finished on Tabby's page; the redirect stays open.
            return AdapterResult(status: .pending, providerReference: reference.text, providerStatus: status)
        case "AUTHORIZED" where reference.capture == .manual:
            return AdapterResult(status: .authorized, providerReference: reference.text,
                                 amount: Money(value: payment.total - payment.captured, currency: currency), providerStatus: status)
        case "AUTHORIZED" where payment.captured == 0:
            // Automatic capture that has not happened yet (Tabby refused it): a later verify tries again.
            return AdapterResult(status: .pending, providerReference: reference.text, problem: AdapterProblem(
                code: .providerError, message: "\(said) and not yet captured", retryable: true), providerStatus: status)
        case "AUTHORIZED":
            // Partly captured under automatic capture: what is captured is charged.
            return AdapterResult(status: .succeeded, providerReference: reference.text,
                                 amount: Money(value: payment.captured, currency: currency), providerStatus: status)
        case "CLOSED" where payment.captured > 0:
            return AdapterResult(status: .succeeded, providerReference: reference.text,
                                 amount: Money(value: payment.captured, currency: currency), providerStatus: status)
        case "CLOSED":
            return problem(.cancelled, .voided, retryable: false, elsewhere: false, "\(said) with nothing captured: the authorization was closed")
        case "REJECTED":
            return problem(.failed, .bnplDeclined, retryable: false, elsewhere: true, "\(said): Tabby turned the buyer down; nothing was charged")
        case "EXPIRED" where payerCancelled:
            return problem(.cancelled, .userCancelled, retryable: true, elsewhere: false, "the payer cancelled on Tabby's page (\(said))")
        case "EXPIRED":
            return problem(.failed, .expired, retryable: false, elsewhere: true, "\(said): it was not authorized within 30 minutes or was abandoned; nothing was charged")
        default:
            return AdapterResult(status: .pending, providerReference: reference.text, problem: AdapterProblem(
                code: .providerError, message: "\(said), a status this adapter does not know", retryable: true), providerStatus: status)
        }
    }

    static func unknown(_ reference: TabbyReference) -> AdapterResult {
        AdapterResult(status: .failed, providerReference: reference.text, problem: AdapterProblem(
            code: .unknownPayment, message: "Tabby's \(reference.region.rawValue) host does not know payment \(reference.paymentId)",
            retryable: false, providerCode: "not_found"))
    }
}
