import Synchronization

/// Wakes one waiting loop: a ring while nobody waits is kept (once), so a
/// ring between two waits is never lost; a wait ends at a ring or after its
/// timeout, whichever comes first.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.rung = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when rung (since the last wait returned), or after `timeout`,
    /// or at once when the task is cancelled. One waiter at a time.
    func wait(timeout: Duration) async {
        if state.withLock({ state in defer { state.rung = false }; return state.rung }) { return }
        let timer = Task { [weak self] in
            // Cancelled (the wait ended first): no ring, or the next wait would end at once.
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.ring()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            ring()
        }
    }
}
