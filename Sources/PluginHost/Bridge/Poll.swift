/// Waiting for a state the host cannot be told about (calls settled, a
/// runner exited): checked every 5 ms until it holds or `grace` passes. A
/// cancelled task stops waiting at once (a cancelled task's sleep returns at
/// once, so a plain loop would spin until `grace`).
enum Poll {
    /// Whether `done` holds, once it does or `grace` passed.
    static func until(_ grace: Duration, _ done: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + grace
        while !done() {
            if Task.isCancelled || ContinuousClock.now >= end { return done() }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
