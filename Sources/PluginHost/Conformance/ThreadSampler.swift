import Foundation
import Synchronization

/// The peak OS thread count of a process while a step runs: `Threads:` of
/// `/proc/<pid>/status`, sampled every few milliseconds from a thread of its
/// own (never the concurrency pool the step's calls run on).
final class ThreadSampler: Sendable {
    private let pid: pid_t
    private let state = Mutex<(peak: Int, stopped: Bool)>((0, false))
    private let done = DispatchSemaphore(value: 0)

    init(pid: pid_t) {
        self.pid = pid
    }

    /// The process's thread count now; nil when it cannot be read (gone).
    static func count(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return nil }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                let count = Self.count(of: pid) ?? 0
                let stop = state.withLock { state in
                    state.peak = max(state.peak, count)
                    return state.stopped
                }
                if stop { break }
                usleep(2_000)
            }
            done.signal()
        }
        thread.name = "plugin-check-threads"
        thread.start()
    }

    /// Stops sampling; the peak seen.
    func finish() -> Int {
        state.withLock { $0.stopped = true }
        done.wait()
        return state.withLock { $0.peak }
    }
}
