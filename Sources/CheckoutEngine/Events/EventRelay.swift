import Logging
import Synchronization

/// On a store several hosts share (``CommittedEventFeed``), hands the
/// events other hosts commit to this host's readers, from the first stream
/// opened on: for each notice of a session someone reads here, the events
/// after the last one its readers were handed are read from the store and
/// published (a reader drops what it has, and fills any gap from the store:
/// ``SessionEvents``). After a lost feed, every watched session is read
/// again. On a store of one host it does nothing.
final class EventRelay: Sendable {
    private let store: any CheckoutStore
    private let hub: EventHub
    private let logger: Logger
    private let running = Mutex<Task<Void, Never>?>(nil)

    init(store: any CheckoutStore, hub: EventHub, logger: Logger) {
        self.store = store
        self.hub = hub
        self.logger = logger
    }

    deinit {
        running.withLock { $0?.cancel() }
    }

    /// Starts relaying, once; later calls do nothing.
    func start() {
        guard let feed = store as? any CommittedEventFeed else { return }
        running.withLock { running in
            guard running == nil else { return }
            let notices = feed.committedEvents()
            running = Task { [weak self] in
                for await notice in notices {
                    guard let self else { return }
                    switch notice {
                    case .recorded(let session, let last):
                        let (watched, delivered) = self.hub.watching(session)
                        guard watched, (delivered ?? 0) < last else { continue }
                        await self.publishRecorded(session, after: delivered ?? last - 1)
                    case .resync:
                        for (session, delivered) in self.hub.watched() {
                            await self.publishRecorded(session, after: delivered ?? 0)
                        }
                    }
                }
            }
        }
    }

    private func publishRecorded(_ session: String, after: Int64) async {
        do {
            hub.publish(try await store.events(ofSession: session, after: after))
        } catch {
            // The readers fill the gap from the store with the next event.
            logger.warning("events of \(session) committed by another host could not be read: \(error)")
        }
    }
}
