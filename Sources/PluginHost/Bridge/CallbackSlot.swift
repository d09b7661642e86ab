import Synchronization

/// A callback set after its owner is made (by whoever adopts it) and called
/// from other threads: the deadline sweeper's, a runner's reader.
///
/// The closure is kept in a class, never as the value of a generic `Mutex`
/// itself. A `Mutex<((Argument) -> Void)?>` reads its closure through an
/// `inout` at the generic abstraction, and Swift writes such an `inout`
/// back re-wrapped in two reabstraction thunks: every `withLock { $0 }`
/// made the stored closure two calls deeper. Read on every 5 ms tick of the
/// sweeper, the chain grew for as long as calls were in flight (a profile of
/// the checkout benchmark found it past 60 levels after seconds, and 3% of
/// the process's time in it); a host under load for a day would have
/// overflowed the sweeper's stack. A class reference is read as is.
final class CallbackSlot<Argument>: Sendable {
    private final class Held: Sendable {
        let action: @Sendable (Argument) -> Void
        init(_ action: @escaping @Sendable (Argument) -> Void) { self.action = action }
    }

    private let held = Mutex<Held?>(nil)

    init() {}

    /// Sets (or replaces) the callback.
    func set(_ action: @escaping @Sendable (Argument) -> Void) {
        let fresh = Held(action)
        held.withLock { $0 = fresh }
    }

    /// Calls the callback, if one is set, outside the lock.
    func callAsFunction(_ argument: Argument) {
        held.withLock { $0 }?.action(argument)
    }
}
