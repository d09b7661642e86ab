import Foundation
import GatewayPayloads

/// The key and fingerprint a mutating call runs under; makes the intent and
/// the answer to commit.
struct IdempotencyScope: Sendable {
    /// The key as stored: scoped by the session's mode.
    var key: String
    var fingerprint: String
    /// What an earlier try under this key recorded (its intent, no answer
    /// yet); nil on a first try.
    var bound: IdempotentAnswer?

    func answer(_ value: some JSONPayload, reference: String? = nil, at: Date) -> IdempotentAnswer {
        IdempotentAnswer(key: key, fingerprint: fingerprint, body: DocumentCoding.encode(value), reference: reference, createdAt: at)
    }

    /// Binds the key to this request before any provider hears of it;
    /// `reference` names what it acts on (nil: nothing live under it now).
    func intent(reference: String?, at: Date) -> IdempotentAnswer {
        IdempotentAnswer(key: key, fingerprint: fingerprint, body: nil, reference: reference, createdAt: bound?.createdAt ?? at)
    }

    /// The provider-side idempotency key of a follow-up operation under this key.
    func providerKey(_ operation: String, of paymentID: String) -> String { "\(paymentID):\(operation):\(key)" }
}
