import Foundation

/// Waits until `condition` holds, checking it every few milliseconds, for at
/// most `limit`; returns whether it held. For a state no event announces (a
/// counter another thread raises, what another process reaches: a host
/// reconciling, a pool reconnecting); where there is an event (a stream, a
/// continuation), wait for that instead.
///
/// The limit is a hang guard, not a timing, and stretches with
/// `GATEWAY_TEST_TIME_SCALE` (``TestTime``): in the suite's first minute
/// every test starts at once on two cores, and a state that comes in
/// milliseconds alone has taken over 30 s there. A guard of 30 s or more
/// that runs out writes every thread's stack out first (``StallReport``).
public func waitUntil(within limit: Duration = .seconds(120), _ condition: () async -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let limit = limit.scaled
    let end = clock.now + limit
    while !(await condition()) {
        guard clock.now < end else {
            if limit >= .seconds(30) {
                let report = await offThePool { StallReport.dump("a wait of \(limit) that ran out") }
                FileHandle.standardError.write(Data((report + "\n").utf8))
            }
            return false
        }
        try await clock.sleep(until: clock.now + .milliseconds(10))
    }
    return true
}

/// Runs `work` (which blocks: a child process, a file lock, a library's
/// synchronous call) on a thread of its own, so that it never holds one of
/// the few threads Swift concurrency runs every test on; the caller's task
/// waits without a thread.
public func offThePool<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        thread.start()
    }
    return try result.get()
}

/// A task executor with a thread of its own: a task that prefers it runs its
/// synchronous stretches there, so a test can make a call that blocks (an
/// adapter's `invoke` that does not return) without holding one of the few
/// threads Swift concurrency runs every test on. The thread ends with the
/// executor's last job once ``finish()`` is called.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The thread ends once the jobs queued so far have run.
    public func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
