import Foundation
import GatewayPayloads
import Logging
import PluginHost
import Synchronization

/// Applies the manifests folder as it now is to a running host, without a
/// restart (`gateway serve` polls, and reloads on SIGHUP and `/admin/reload`).
///
/// - A file whose bytes did not change keeps its record and adapter instance:
///   nothing is reloaded, so an idle poll costs a directory listing and a few
///   small reads.
/// - A changed file is loaded again on its own. Disabled or removed, its
///   provider stops being offered and routed at once; its adapter instance
///   stays reachable for the attempts already made on it (``HostedProviders``).
/// - A file that turns invalid (or whose adapter no longer loads) is refused
///   and logged, and its last good state stays in force (with that state's
///   ``ProviderRecord/manifestSha256``: the digest shows what runs, so this
///   host differs from one that applied the change); so does every other
///   provider's. A new file that is invalid is refused on its own.
public final class ManifestReloader: Sendable {
    /// What a reload did.
    public struct Report: Sendable, Equatable {
        /// Manifests (file names) loaded anew: added, or changed and valid.
        public var applied: [String] = []
        /// Manifests gone from the folder, whose providers are no longer offered.
        public var removed: [String] = []
        /// Manifests refused, with why; for a change, the last good state stays.
        public var refused: [Refusal] = []

        public var changedAnything: Bool { !applied.isEmpty || !removed.isEmpty }
    }

    public struct Refusal: Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var reason: String
        /// Whether the previous, good state of this manifest stays in force.
        public var keptLastGood: Bool
        public var description: String { "\(file): \(reason)" + (keptLastGood ? " (its last good state stays)" : "") }
    }

    private struct Entry {
        /// The bytes last read (good or not), so an unchanged bad file is not retried.
        var seen: Data
        /// The record in force for this file.
        var record: ProviderRecord
    }

    private let directory: URL
    private let loader: AdapterLoader
    private let providers: HostedProviders
    private let logger: Logger
    private let sandbox: SandboxOverlay?
    private let entries = Mutex<[String: Entry]>([:])
    /// One reload at a time (the poller, SIGHUP and the admin API may race).
    private let running = Mutex<Void>(())
    /// Set by ``close(grace:)``: the host is shutting down, reloads load nothing.
    private let closed = Atomic<Bool>(false)

    init(directory: URL, loader: AdapterLoader, providers: HostedProviders, sandbox: SandboxOverlay?, logger: Logger) {
        self.directory = directory
        self.sandbox = sandbox
        self.loader = loader
        self.providers = providers
        self.logger = logger
        loading = DispatchQueue(label: "manifest-loading")
    }

    /// Where this host's reloads run: opening a library and creating its
    /// adapter run adapter code that may block, so never on a Swift
    /// concurrency thread (two of them on a 2-core machine are the whole
    /// pool). One at a time, and this host's own: a reload of one gateway
    /// never waits behind another's in the same process.
    private let loading: DispatchQueue

    /// Reads the folder and applies what changed, on the loading queue (the
    /// caller's task waits without holding its thread). Throws only when the
    /// folder itself cannot be read (then nothing changes).
    @discardableResult
    public func reload() async throws -> Report {
        try await withCheckedThrowingContinuation { continuation in
            loading.async { continuation.resume(with: Result { try self.reloadNow() }) }
        }
    }

    /// ``reload()`` on the calling thread: for the host's first load, before
    /// it serves, and for callers already off the concurrency pool (SIGHUP).
    @discardableResult
    public func reloadNow() throws -> Report {
        try running.withLock { _ in
            guard !closed.load(ordering: .sequentiallyConsistent) else {
                logger.notice("the gateway is shutting down: manifests not reloaded")
                return Report()
            }
            return try reloadLocked()
        }
    }

    /// Stops reloading, for the host's shutdown: a reload from now on loads
    /// nothing, and one in flight (on the loading queue, or SIGHUP's on its
    /// thread) is waited for, at most `grace` (a runner's start is bounded;
    /// an in-process create that never returns is not waited for beyond it,
    /// and what it loads later is shut down at once: ``HostedProviders``),
    /// so that no adapter it loads outlives the shutdown.
    /// Whether reloading has stopped (the host is shutting down).
    public var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) }

    func close(grace: Duration) async {
        closed.store(true, ordering: .sequentiallyConsistent)
        let done = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { continuation in
            done.withLock { $0 = continuation }
            let finish: @Sendable () -> Void = { done.withLock { $0.take() }?.resume() }
            loading.async { self.running.withLock { _ in }; finish() }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(grace.nanoseconds)), execute: finish)
        }
    }

    private func reloadLocked() throws -> Report {
        let catalogue = try ManifestCatalogue.scan(directory)
        var previous = entries.withLock { $0 }
        var next: [String: Entry] = [:]
        var records: [ProviderRecord] = []
        var report = Report()
        // Which file each id is was decided by the scan, before anything is
        // loaded (the first valid manifest, in file order, that names it): a
        // duplicate is refused and its library never opened. A file that turned
        // invalid keeps its last good state, and so keeps its id: another file
        // naming that id is a duplicate of it until it is fixed or removed.
        var keptOwner: [String: String] = [:]
        for file in catalogue.entries where file.manifest == nil {
            if let old = previous[file.url.path], old.record.state != .refused, let id = old.record.id { keptOwner[id] = file.url.path }
        }
        for file in catalogue.entries {
            let url = file.url
            let name = url.lastPathComponent
            guard let bytes = file.bytes else { continue }
            let old = previous.removeValue(forKey: url.path)
            var entry: Entry
            let keptBy = file.manifest.flatMap { keptOwner[$0.id] }.flatMap { $0 == url.path ? nil : $0 }
            if file.duplicateOf != nil || keptBy != nil {
                var record = ProviderRegistry.record(of: file)
                if let keptBy, let id = file.manifest?.id { record.failure = .duplicateID(id: id, firstManifest: keptBy) }
                if old == nil || old?.seen != bytes || old?.record.state != .refused {
                    let reason = record.failure.map { "\($0)" } ?? "refused"
                    report.refused.append(Refusal(file: name, reason: reason, keptLastGood: false))
                    logger.error("manifest \(url.path) refused: \(reason)")
                }
                next[url.path] = Entry(seen: bytes, record: record)
                records.append(record)
                continue
            }
            if let old, old.seen == bytes {
                entry = old
            } else {
                // Loaded from the bytes the scan read (the same that `seen` keeps).
                let record = ProviderRegistry.load(file, loader: loader, sandbox: sandbox)
                if record.state == .refused, let old, old.record.state != .refused {
                    let reason = record.failure.map { "\($0)" } ?? "refused"
                    report.refused.append(Refusal(file: name, reason: reason, keptLastGood: true))
                    logger.error("manifest \(url.path) refused, its last good state stays: \(reason)")
                    entry = Entry(seen: bytes, record: old.record)
                } else {
                    entry = Entry(seen: bytes, record: record)
                    if record.state == .refused {
                        let reason = record.failure.map { "\($0)" } ?? "refused"
                        report.refused.append(Refusal(file: name, reason: reason, keptLastGood: false))
                        logger.error("manifest \(url.path) refused: \(reason)")
                    } else {
                        report.applied.append(name)
                        logger.info("manifest \(url.path) applied: \(record.id ?? "?") \(record.state.rawValue)")
                    }
                }
            }
            next[url.path] = entry
            records.append(entry.record)
        }
        report.removed = previous.keys.map { URL(fileURLWithPath: $0).lastPathComponent }.sorted()
        for name in report.removed { logger.info("manifest \(name) removed: its provider is no longer offered") }
        let first = entries.withLock { current -> Bool in
            let first = current.isEmpty
            current = next
            return first
        }
        if first || report.changedAnything || !report.refused.isEmpty {
            providers.replace(with: records)
        }
        return report
    }
}

/// Polls the manifests folder and reloads when it changed: the live-manifest
/// loop of a running host. Polling (every ``interval``) works on every file
/// system and editor (rename-on-save included), where change notifications
/// are easy to miss.
struct ManifestWatcher: Sendable {
    let reloader: ManifestReloader
    let interval: Duration
    let logger: Logger

    init(reloader: ManifestReloader, interval: Duration = .milliseconds(500), logger: Logger) {
        self.reloader = reloader
        self.interval = interval
        self.logger = logger
    }

    /// Polls until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            do {
                try await reloader.reload()
            } catch {
                logger.error("cannot read the manifests folder: \(error); providers stay as they are")
            }
            try? await Task.sleep(for: interval)
        }
    }
}
