import CheckoutEngine
import PluginHost
import Synchronization

/// The providers the host has loaded, as the engine's directory. Replacing
/// the records (a reload) changes what new attempts are routed to; an adapter
/// that drops out stays reachable for the attempts already made on it.
public final class HostedProviders: ProviderDirectory, Sendable {
    private struct State {
        var records: [ProviderRecord] = []
        var profiles: [ProviderProfile] = []
        var providers: [String: AdapterProvider] = [:]
        /// Adapters replaced or disabled since, kept for their live attempts.
        var retired: [String: AdapterProvider] = [:]
        /// Instances no id reaches any more, being drained and destroyed.
        var drains: [ObjectIdentifier: Task<Void, Never>] = [:]
        /// Set by ``close(grace:)``: whatever a late reload loads is shut down at once.
        var closing = false
    }

    private let state = Mutex(State())
    private let observer: AdapterCallObserver?

    public init(_ records: [ProviderRecord] = [], observer: AdapterCallObserver? = nil) {
        self.observer = observer
        replace(with: records)
    }

    /// Makes `records` the current set.
    ///
    /// An instance no id can reach any more (replaced by a new instance of
    /// its provider: an upgrade, or any change to its manifest) is drained:
    /// the calls in flight on it finish there (within its manifest's timeout
    /// and a margin, then they are cancelled), and it is destroyed; an
    /// in-process library stays mapped. An instance whose provider has no
    /// new one (disabled, removed, refused) stays, for its attempts' later
    /// operations and reconciliation.
    public func replace(with records: [ProviderRecord]) {
        state.withLock { state in
            // Drained in the same critical section that finds them, so that
            // ``close(grace:)`` either sees each drain or is seen closing.
            for adapter in apply(records, to: &state) {
                let grace = Duration.milliseconds(adapter.manifest.timeoutMilliseconds) + .seconds(5)
                let key = ObjectIdentifier(adapter)
                guard state.drains[key] == nil else { continue }
                state.drains[key] = Task.detached { [weak self] in
                    await adapter.shutdown(grace: grace)
                    _ = self?.state.withLock { $0.drains.removeValue(forKey: key) }
                }
            }
        }
    }

    /// Applies `records` to `state`; answers the instances no id reaches any
    /// more. (Under the state's lock: takes no lock.)
    private func apply(_ records: [ProviderRecord], to state: inout State) -> [AdapterInstance] {
        if state.closing {
            // The host is shutting down (a reload raced it): serve nothing new.
            let known = state.providers.values.map(\.adapter) + state.retired.values.map(\.adapter)
            state.records = records
            return records.compactMap(\.adapter).filter { adapter in !known.contains { $0 === adapter } }
        }
        let before = state.providers.values.map(\.adapter) + state.retired.values.map(\.adapter)
        for (id, provider) in state.providers { state.retired[id] = provider }
        state.records = records
        state.providers = [:]
        state.profiles = []
        var claimed: Set<String> = []
        for record in records {
            guard let manifest = record.manifest else { continue }
            // One file per id (the reloader refuses duplicates); never two.
            if record.state != .refused, !claimed.insert(manifest.id).inserted { continue }
            if let adapter = record.adapter, record.state == .loaded {
                let id = manifest.id
                state.providers[id] = AdapterProvider(adapter: adapter, observer: observer) { [weak self] in self?.current(id) }
                state.profiles.append(ProviderProfile(manifest: manifest))
            } else if record.state == .disabled {
                state.profiles.append(ProviderProfile(manifest: manifest))
            }
        }
        // A retired instance is reachable only while its id has no current one.
        for id in state.retired.keys where state.providers[id] != nil { state.retired[id] = nil }
        let reachable = state.providers.values.map(\.adapter) + state.retired.values.map(\.adapter)
        var seen: Set<ObjectIdentifier> = []
        return before.filter { adapter in
            !reachable.contains { $0 === adapter } && seen.insert(ObjectIdentifier(adapter)).inserted
        }
    }

    /// Shuts every instance down (the current ones and those kept for their
    /// attempts, each within `grace`) and waits for those being drained; a
    /// reload that lands afterwards serves nothing.
    public func close(grace: Duration) async {
        let adapters = state.withLock { state in
            state.closing = true
            return state.providers.values.map(\.adapter) + state.retired.values.map(\.adapter)
        }
        await withTaskGroup(of: Void.self) { group in
            for adapter in adapters { group.addTask { await adapter.shutdown(grace: grace) } }
        }
        // Every drain, those a reload racing this started meanwhile included.
        while let drain = state.withLock({ $0.drains.values.first }) { await drain.value }
    }

    public var records: [ProviderRecord] { state.withLock { $0.records } }

    /// The instance serving provider `id` now.
    private func current(_ id: String) -> AdapterInstance? {
        state.withLock { $0.providers[id]?.adapter }
    }

    /// What routing sees: a provider whose adapter is quarantined (its runner
    /// crashed too often) counts as disabled until ops re-enable it.
    public func profiles() -> [ProviderProfile] {
        state.withLock { state in
            // The common case, nothing quarantined: the snapshot's own array (one reference, no copies).
            let quarantined = state.profiles.contains { profile in
                guard profile.enabled, let adapter = state.providers[profile.id]?.adapter, case .quarantined = adapter.health else { return false }
                return true
            }
            guard quarantined else { return state.profiles }
            return state.profiles.map { profile in
                guard profile.enabled, let adapter = state.providers[profile.id]?.adapter, case .quarantined = adapter.health else { return profile }
                var excluded = profile
                excluded.enabled = false
                return excluded
            }
        }
    }

    public func provider(_ id: String) -> (any PaymentProvider)? {
        state.withLock { $0.providers[id] ?? $0.retired[id] }
    }
}
