import Synchronization

/// The sessions this engine last committed, so that the next operation on a
/// session need not read and decode its whole document again.
///
/// A cached session is used only when the store's version of it is the same
/// (``CheckoutStore/sessionVersion(_:)``, a read of one integer): a session
/// changed by another process on the same store is read afresh. Bounded: the
/// oldest entries are dropped first.
final class SessionCache: Sendable {
    private struct Entries {
        var sessions: [String: Session] = [:]
        /// Insertion order, for eviction; `head` is the oldest live index.
        var order: [String] = []
        var head = 0
    }

    private let entries = Mutex(Entries())
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func get(_ id: String) -> Session? {
        entries.withLock { $0.sessions[id] }
    }

    func put(_ session: Session) {
        entries.withLock { all in
            if all.sessions.updateValue(session, forKey: session.id) == nil {
                all.order.append(session.id)
            }
            while all.sessions.count > capacity, all.head < all.order.count {
                all.sessions[all.order[all.head]] = nil
                all.head += 1
            }
            if all.head > capacity {
                all.order.removeFirst(all.head)
                all.head = 0
            }
        }
    }

    func remove(_ id: String) {
        _ = entries.withLock { $0.sessions.removeValue(forKey: id) }
    }

    var count: Int { entries.withLock { $0.sessions.count } }
}
