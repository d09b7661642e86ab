import Foundation
import GatewayPayloads

/// Runs a mutating request once per idempotency key (``Checkout``'s rules):
/// in this process through the ``IdempotencyGate`` (concurrent duplicates
/// wait for the first), across hosts through the store (the key's committed
/// intent or answer), with a few rounds when another host's try under the
/// same key got ahead.
struct IdempotentRuns: Sendable {
    let store: any CheckoutStore
    let fingerprinter: Fingerprinter
    let gate = IdempotencyGate<any Sendable>()

    /// Runs `body` once per idempotency key (see the type's rules).
    ///
    /// Keys are scoped by `mode` (a test key and a live key never meet). A
    /// key whose request is already bound (an earlier try recorded its
    /// intent) runs `body` again only with the same request, and `body` is
    /// told what the earlier try left (``IdempotencyScope/bound``) so it can
    /// settle or resume it rather than start anew.
    func run<Request: Fingerprintable, Response: JSONPayload>(
        _ key: String?, mode: PaymentMode, operation: String, target: String, request: Request,
        _ body: @escaping @Sendable (IdempotencyScope?) async throws -> Response
    ) async throws -> Response {
        guard let key else { return try await body(nil) }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "an idempotency key must have 1 to 255 bytes")
        }
        // As an HTTP header's value could not: two keys must never become one in a store.
        guard !Checkout.hasControlCharacter(key) else {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "an idempotency key must not contain control characters")
        }
        let scoped = "\(mode.rawValue):\(key)"
        let fingerprint = fingerprinter.of(operation: operation, target: target, body: request)
        let store = self.store
        // Made only when thrown: a problem's text is built with string searches.
        let conflict: @Sendable () -> Problem = { ProblemCatalog.problem(code: .idempotencyConflict, detail: "idempotency key \"\(key)\" was already used with a different request") }
        // The key's answer if it has one, else `body` told what it is bound to.
        let once: @Sendable () async throws -> Response = {
            let stored = try await store.answer(forKey: scoped)
            if let stored {
                guard stored.fingerprint == fingerprint else { throw conflict() }
                if let body = stored.body { return try DocumentCoding.decode(Response.self, from: body) }
            }
            return try await body(IdempotencyScope(key: scoped, fingerprint: fingerprint, bound: stored))
        }
        do {
            let answer = try await gate.run(key: scoped, fingerprint: fingerprint) { () async throws -> any Sendable in
                // The gate serialises one key in this process only: another
                // host sharing the store may bind the key between this try's
                // read and its first write, and this try then wrote and sent
                // nothing. Answered as a retry under the key would be: from
                // the other host's answer, or its try as it now is. That can
                // race the other host again (its answer recorded meanwhile):
                // a few rounds, each reading what the store has.
                var round = 0
                while true {
                    do {
                        return try await once()
                    } catch let error where round < 3 && Self.lostTheKeyToAnotherHost(error) {
                        round += 1
                        guard let stored = try await store.answer(forKey: scoped) else { throw error }
                        guard stored.fingerprint == fingerprint else { throw conflict() }
                    }
                }
            }
            return answer as! Response
        } catch is IdempotencyGate<any Sendable>.Refusal {
            throw conflict()
        } catch StoreConflict.duplicateKey {
            throw ProblemCatalog.problem(code: .operationInProgress, detail: "idempotency key \"\(key)\" is being answered by another host; retry with the same key for its answer")
        }
    }

    /// Errors a try meets, before it writes or sends anything, when another
    /// host's try under the same key got ahead: the key bound already (the
    /// commit refused), or that try's attempt live, or the session paid
    /// (completed) already. Only acted on when the key turns out bound to
    /// this same request.
    static func lostTheKeyToAnotherHost(_ error: any Error) -> Bool {
        switch error {
        case StoreConflict.duplicateKey, is IntentRefused: true
        case DomainError.attemptInProgress, DomainError.sessionAlreadyPaid, DomainError.sessionNotOpen(.completed): true
        default: false
        }
    }
}

/// A try's first commit (its intent: the attempt `processing`, the key
/// bound) was refused: nothing was written and no provider was called.
struct IntentRefused: Error {
    var conflict: StoreConflict
}
