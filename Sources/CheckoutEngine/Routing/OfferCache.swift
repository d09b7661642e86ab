import PaymentFields
import Synchronization

/// What a session is offered (its available methods, and each method's form
/// as a value and as bytes), kept per set of providers serving it and
/// currency: the same for every session those providers serve in that
/// currency until the manifests change, so worked out once, not per session.
///
/// Which providers serve a session is still decided per session (its amount
/// against their limits, its country, its capture mode, their circuits now);
/// only what follows from that choice is kept. An entry is found by the
/// identities of the serving profiles' storage (``ProviderProfile/identity``)
/// and holds those profiles, so no identity it was made for can be reused by
/// another profile while it is kept. A manifests reload makes new profiles,
/// and so new entries; the old ones go when the cache is full.
final class OfferCache: Sendable {
    struct Offer: Sendable {
        var methods: [String]
        var fields: [String: [Field]]
        var forms: [String: [UInt8]]
    }

    private struct Key: Hashable {
        var serving: [ObjectIdentifier]
        var currency: String
    }

    private struct Entry {
        /// Kept alive with the entry: their identities are its key.
        var profiles: [ProviderProfile]
        var offer: Offer
    }

    private let entries = Mutex<[Key: Entry]>([:])
    /// Far more than the sets of providers and currencies a host serves;
    /// when full (reloads, quarantines), it starts again.
    let capacity: Int

    init(capacity: Int = 512) {
        self.capacity = capacity
    }

    /// The offer of `serving` (in routing order) in `currency`: kept, or made
    /// by `make` and kept.
    func offer(serving: [ProviderProfile], currency: String, make: () -> Offer) -> Offer {
        let key = Key(serving: serving.map(\.identity), currency: currency)
        if let known = entries.withLock({ $0[key]?.offer }) { return known }
        let made = make()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(profiles: serving, offer: made)
        }
        return made
    }

    var count: Int { entries.withLock { $0.count } }
}
