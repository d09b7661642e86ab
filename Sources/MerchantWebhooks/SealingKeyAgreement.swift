import CheckoutEngine
import Foundation
import Synchronization

/// Whether this host's sealing key is the one the store's secrets were
/// sealed under (``WebhookStore/agreeOnSealingKey(check:)``), asked once and
/// then remembered when it is. A host with another key (a data folder
/// restored without its `webhook-secrets.key`, a new host not given the
/// others' copy) registers and delivers nothing, and says why, rather than
/// sealing secrets the other hosts cannot open or failing every delivery.
final class SealingKeyAgreement: Sendable {
    private let store: any WebhookStore
    private let check: String
    private let agreed = Mutex(false)

    init(store: any WebhookStore, sealer: SecretSealer) {
        self.store = store
        self.check = sealer.check
    }

    /// The key differs from the one kept with the store.
    struct Mismatch: Error, CustomStringConvertible {
        var description: String {
            "this host's webhook-secrets.key is not the key the store's webhook secrets were sealed under: give every host the same file (docs/webhooks.md \"Security\"); until then it registers and delivers no webhook"
        }
    }

    /// Returns when the keys agree; throws ``Mismatch`` when they do not.
    func ensure() async throws {
        if agreed.withLock({ $0 }) { return }
        for _ in 0..<20 {
            guard let kept = try await store.agreeOnSealingKey(check: check) else {
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            guard kept == check else { throw Mismatch() }
            agreed.withLock { $0 = true }
            return
        }
        throw Mismatch()
    }
}
