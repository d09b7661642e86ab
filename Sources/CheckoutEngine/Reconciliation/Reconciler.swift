import Foundation
import Logging

/// The janitor: verifies live attempts with their providers on a backoff
/// schedule until they are final, and expires abandoned sessions. Its first
/// pass runs at once, so whatever a crash left `processing` (once its lease
/// has run out) or `pending` is picked up on start-up.
///
/// Hosts sharing a store each claim the due attempts they verify (see
/// ``CheckoutStore/claimDueAttempts(at:limit:claimant:until:)``), a few at a
/// time: a pass claims at most ``parallelism`` attempts, verifies them at
/// once, and claims the next ones when they are done. A claim is so held
/// only while its own round runs (its verify calls, each bounded by its
/// provider's timeout), never while a long queue ahead of it is worked
/// through against a slow provider, so it does not run out before its
/// attempt is verified and another host verifies it too. (A claim also
/// asks for one more attempt per attempt that failed earlier in the pass:
/// still due and still this host's, the store may hand it back, and it is
/// not tried again before the next pass.)
public struct Reconciler: Sendable {
    public let checkout: Checkout
    /// Time between passes.
    public var interval: Duration
    /// At most this many attempts claimed, and verified at once, per round.
    public var parallelism: Int
    /// At most this many attempts and sessions looked at per pass.
    public var batch: Int
    /// Who claims the due attempts in the store (the engine's
    /// ``Checkout/engineID`` unless said otherwise; a claimant may take its
    /// own claims again), and for how long a claim keeps other hosts off an
    /// attempt whose verify has not been committed: longer than one round
    /// takes, that is longer than a verify call (a provider's call timeout,
    /// and the settling of its held operations) takes.
    public var claimant: String
    public var claimFor: TimeInterval

    public init(checkout: Checkout, interval: Duration = .seconds(1), parallelism: Int = 16, batch: Int = 500,
                claimant: String? = nil, claimFor: TimeInterval = 120) {
        self.checkout = checkout
        self.interval = interval
        self.parallelism = max(1, parallelism)
        self.batch = batch
        self.claimant = claimant ?? checkout.engineID
        self.claimFor = claimFor
    }

    /// What one pass did.
    public struct Pass: Sendable, Equatable {
        public var verified = 0
        public var failed = 0
        public var expired = 0
        public init() {}
    }

    /// Runs passes until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            let pass = await runPass()
            if pass != Pass() {
                checkout.logger.info("reconciliation: \(pass.verified) verified, \(pass.failed) could not be, \(pass.expired) sessions expired")
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One pass: the attempts due when it starts verified in rounds (each
    /// round claims at most ``parallelism`` new ones and verifies them at
    /// once; the next is claimed when it is done) until none is left or
    /// ``batch`` were looked at, each once, then every session past its
    /// deadline expired. A store that cannot be read ends that part of the
    /// pass (logged at warning); the next pass tries again.
    @discardableResult
    public func runPass() async -> Pass {
        var pass = Pass()
        let at = checkout.now()
        // Attempts looked at in this pass. One whose reconciliation failed
        // is still due, and still this claimant's, so a later claim may hand
        // it back: it is not tried again before the next pass, and a claim
        // asks for one more attempt per failure so that it takes no new
        // attempt's place.
        var seen = Set<AttemptRef>()
        while pass.verified + pass.failed < batch, !Task.isCancelled {
            let round = min(parallelism, batch - pass.verified - pass.failed)
            let claimed: [AttemptRef]
            do {
                claimed = try await checkout.store.claimDueAttempts(
                    at: at, limit: round + pass.failed, claimant: claimant, until: checkout.now().addingTimeInterval(claimFor))
            } catch {
                checkout.logger.warning("reconciliation could not claim due attempts (the next pass tries again): \(error)")
                break
            }
            let due = claimed.filter { !seen.contains($0) }.prefix(round)
            if due.isEmpty { break }
            seen.formUnion(due)
            await withTaskGroup(of: Bool.self) { group in
                for ref in due {
                    group.addTask {
                        do {
                            try await checkout.reconcile(ref)
                            return true
                        } catch {
                            checkout.logger.warning("reconciling \(ref.attemptID) failed: \(error)")
                            return false
                        }
                    }
                }
                for await ok in group {
                    if ok { pass.verified += 1 } else { pass.failed += 1 }
                }
            }
        }
        let expired: [String]
        do {
            expired = try await checkout.store.expiredSessions(at: at, limit: batch)
        } catch {
            checkout.logger.warning("reconciliation could not read the expired sessions (the next pass tries again): \(error)")
            expired = []
        }
        for id in expired {
            do {
                if try await checkout.expireIfDue(id) { pass.expired += 1 }
            } catch {
                checkout.logger.warning("expiring \(id) failed: \(error)")
            }
        }
        return pass
    }
}
