import Synchronization

/// The callback-style requests of one adapter instance in flight
/// (`http_send`, `wallet_decrypt`): each runs in a task of its own, and
/// counts until its answer has been handed back, that is until the
/// adapter's callback *returned* (in process) or the answer's frame was
/// written to the runner (which runs the callback before it destroys).
///
/// ``AdapterInstance/shutdown(grace:)`` destroys an instance only once none
/// is in flight: it waits, cancels what is left (a cancelled request still
/// answers, `GW_E_UNREACHABLE` or `GW_E_OUTCOME_UNKNOWN`), waits again, and
/// closes them (``closeIfIdle()``). A request made once they are closed is
/// dropped without an answer and logged: the header says a request made
/// after an instance's last owed completion may get no callback.
final class CallbackRequests: Sendable {
    private struct State {
        var next: UInt64 = 0
        var running: [UInt64: Task<Void, Never>] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Runs `answer` as one request, unless closed (false: nothing ran).
    func start(_ answer: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.next += 1
            let id = state.next
            // Registered before it can end: its end takes this same lock.
            state.running[id] = Task {
                await answer()
                self.end(id)
            }
            return true
        }
    }

    private func end(_ id: UInt64) {
        _ = state.withLock { $0.running.removeValue(forKey: id) }
    }

    var inFlight: Int { state.withLock { $0.running.count } }

    /// Cancels every request in flight (each still answers).
    func cancelAll() {
        for task in state.withLock({ Array($0.running.values) }) { task.cancel() }
    }

    /// Closes to new requests if none is in flight; whether it did.
    func closeIfIdle() -> Bool {
        state.withLock { state in
            guard state.running.isEmpty else { return false }
            state.closed = true
            return true
        }
    }

    /// Waits up to `grace` for none to be in flight, then cancels the rest
    /// and waits up to `grace` again; closes them if none is left. Whether
    /// it closed them (false: a callback has not returned, and the instance
    /// must not be destroyed).
    func drain(grace: Duration) async -> Bool {
        if await idle(within: grace), closeIfIdle() { return true }
        cancelAll()
        _ = await idle(within: grace)
        return closeIfIdle()
    }

    private func idle(within grace: Duration) async -> Bool {
        await Poll.until(grace) { self.inFlight == 0 }
    }
}
