import Foundation
import Logging

/// The janitor: verifies live attempts with their providers on a backoff
/// schedule until they are final, and expires abandoned sessions. Its first
/// pass runs at once, so whatever a crash left `processing` (once its lease
/// has run out) or `pending` is picked up on start-up.
public struct Reconciler: Sendable {
    public let checkout: Checkout
    /// Time between passes.
    public var interval: Duration
    /// At most this many attempts verified at once.
    public var parallelism: Int
    /// At most this many attempts and sessions looked at per pass.
    public var batch: Int
    /// Who claims the due attempts in the store (the engine's
    /// ``Checkout/engineID`` unless said otherwise; a claimant may take its
    /// own claims again), and for how long a claim keeps other hosts off an attempt whose verify has
    /// not been committed: longer than a verify call takes.
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

    /// One pass: every due attempt verified (a few at a time), then every
    /// session past its deadline expired.
    @discardableResult
    public func runPass() async -> Pass {
        var pass = Pass()
        let at = checkout.now()
        let due = (try? await checkout.store.claimDueAttempts(at: at, limit: batch, claimant: claimant,
                                                               until: at.addingTimeInterval(claimFor))) ?? []
        await withTaskGroup(of: Bool.self) { group in
            var iterator = due.makeIterator()
            func next() -> Bool {
                guard let ref = iterator.next() else { return false }
                group.addTask {
                    do {
                        try await checkout.reconcile(ref)
                        return true
                    } catch {
                        checkout.logger.warning("reconciling \(ref.attemptID) failed: \(error)")
                        return false
                    }
                }
                return true
            }
            for _ in 0..<parallelism where next() {}
            while let ok = await group.next() {
                if ok { pass.verified += 1 } else { pass.failed += 1 }
                _ = next()
            }
        }
        for id in (try? await checkout.store.expiredSessions(at: at, limit: batch)) ?? [] {
            do {
                if try await checkout.expireIfDue(id) { pass.expired += 1 }
            } catch {
                checkout.logger.warning("expiring \(id) failed: \(error)")
            }
        }
        return pass
    }
}
