import Dispatch
import Synchronization

/// The deadlines of many calls, watched by one timer: a call adds what to
/// do if its deadline passes, and removes it when it ends in time (nearly
/// every call). The timer is armed for the earliest deadline only, so it
/// goes off about once a deadline's length under any load, not once a call:
/// a timer armed for every call woke libdispatch's manager thread for each,
/// which preempted the cooperative pool's threads (BENCHMARKS.md).
final class Deadlines: Sendable {
    private struct Entry: Sendable {
        var expires: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }

    private struct State: Sendable {
        var last: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        /// When the armed timer goes off (nil: none armed).
        var alarm: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    init() {}

    /// Runs `action` once `duration` has passed, unless ``remove(_:)`` comes
    /// first; answers the ticket to remove it with.
    func add(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let expires = ContinuousClock.now + duration
        let (ticket, arm) = state.withLock { state -> (UInt64, Bool) in
            state.last += 1
            state.entries[state.last] = Entry(expires: expires, action: action)
            guard state.alarm.map({ expires < $0 }) ?? true else { return (state.last, false) }
            state.alarm = expires
            return (state.last, true)
        }
        if arm { self.arm(at: expires) }
        return ticket
    }

    /// Takes `ticket`'s action back: true when it had not run (its deadline
    /// had not passed), false when it ran or is running.
    @discardableResult
    func remove(_ ticket: UInt64) -> Bool {
        state.withLock { $0.entries.removeValue(forKey: ticket) != nil }
    }

    /// Takes back every ticket of `tickets` (a batch's), under one lock.
    func remove(all tickets: some Sequence<UInt64>) {
        state.withLock { state in for ticket in tickets { state.entries.removeValue(forKey: ticket) } }
    }

    /// Deadlines not yet passed nor removed.
    var pending: Int { state.withLock { $0.entries.count } }

    private func arm(at instant: ContinuousClock.Instant) {
        let nanoseconds = max(0, ((instant - ContinuousClock.now) / .nanoseconds(1)).rounded(.up))
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { self.goOff(armedFor: instant) }
    }

    /// Runs the actions whose deadline passed (outside the lock: an action
    /// may take locks of its own), then arms the timer for the earliest one
    /// left, unless another timer is armed for later already. The timer
    /// armed for the alarm always arms the next, even when it went off a
    /// little early by this clock (then for the same instant again).
    private func goOff(armedFor instant: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        let (due, next): ([Entry], ContinuousClock.Instant?) = state.withLock { state in
            let due = state.entries.filter { $0.value.expires <= now }
            for ticket in due.keys { state.entries.removeValue(forKey: ticket) }
            if let armed = state.alarm, armed != instant, armed > now { return (Array(due.values), nil) }
            state.alarm = state.entries.values.lazy.map(\.expires).min()
            return (Array(due.values), state.alarm)
        }
        for entry in due { entry.action() }
        if let next { arm(at: next) }
    }
}
