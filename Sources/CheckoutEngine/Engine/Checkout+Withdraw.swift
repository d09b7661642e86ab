import Foundation
import GatewayPayloads

extension Checkout {
    /// Withdraws `session`'s pending attempt at its provider, for an abort:
    /// the provider's `void` (a payment order's abort, a redirected
    /// payment's cancel), then a `verify`, whose answer alone is applied.
    /// The void's own answer ends nothing: a payer who paid in the meantime
    /// makes the verify answer `succeeded`, and the session is then paid,
    /// not aborted. When the provider cannot void (no reference yet, no such
    /// operation, a refusal, no answer) nothing changes, and the abort is
    /// refused as before. The provider's idempotency key is the abort's, or
    /// `<attempt>:abort` without one, so a retried abort voids once.
    func withdraw(_ session: Session, attempt: Attempt, key: IdempotencyScope?) async throws -> Session {
        guard let reference = attempt.providerReference, let provider = directory.provider(attempt.providerID) else { return session }
        let providerKey = key?.providerKey("abort", of: attempt.id) ?? "\(attempt.id):abort"
        let voided = await provider.perform(.void(VoidRequest(paymentId: attempt.id, idempotencyKey: providerKey, providerReference: reference)))
        record(voided, for: attempt.providerID)
        guard case .answered(let withdrawn) = voided, withdrawn.status == .succeeded else { return session }
        let verified = await provider.perform(.verify(VerifyRequest(paymentId: attempt.id, providerReference: reference)))
        record(verified, for: attempt.providerID)
        guard case .answered(let result) = verified else { return session }
        var session = session
        let at = now()
        var events = [SessionEvent(sessionID: session.id, at: at, type: .attemptWithdrawn, attemptID: attempt.id, status: attempt.status.rawValue,
                                   providerID: attempt.providerID, detail: "voided at \(attempt.providerID) for the merchant's abort")]
        events += try await apply(result, to: &session, attempt: attempt.id, at: at)
        return try await commit(session, events: events)
    }
}
