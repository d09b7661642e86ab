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
    }

    private let state = Mutex(State())
    private let observer: AdapterCallObserver?

    public init(_ records: [ProviderRecord] = [], observer: AdapterCallObserver? = nil) {
        self.observer = observer
        replace(with: records)
    }

    /// Makes `records` the current set.
    public func replace(with records: [ProviderRecord]) {
        state.withLock { state in
            for (id, provider) in state.providers { state.retired[id] = provider }
            state.records = records
            state.providers = [:]
            state.profiles = []
            for record in records {
                guard let manifest = record.manifest else { continue }
                if let adapter = record.adapter, record.state == .loaded {
                    state.providers[manifest.id] = AdapterProvider(adapter: adapter, observer: observer)
                    state.profiles.append(ProviderProfile(manifest: manifest))
                } else if record.state == .disabled {
                    state.profiles.append(ProviderProfile(manifest: manifest))
                }
            }
        }
    }

    public var records: [ProviderRecord] { state.withLock { $0.records } }

    /// Every adapter instance this host holds (current and retired).
    var adapters: [AdapterInstance] {
        state.withLock { Array($0.providers.values.map(\.adapter)) + Array($0.retired.values.map(\.adapter)) }
    }

    public func profiles() -> [ProviderProfile] { state.withLock { $0.profiles } }

    public func provider(_ id: String) -> (any PaymentProvider)? {
        state.withLock { $0.providers[id] ?? $0.retired[id] }
    }
}
