import Foundation
import GatewayPayloads
import GRDB
import Synchronization

/// Copies the write-ahead log back into the database file on a thread of its
/// own, so that the single writer never does it between commits.
///
/// SQLite's default is for the committing connection to checkpoint once the
/// log passes 1,000 pages: the writer then copies those pages and syncs the
/// database file while every payment waiting for the next group commit waits
/// too. Here the writer's automatic checkpoint is raised to a safety limit
/// (``writerLimitPages``) it should never reach, and this thread runs PASSIVE
/// checkpoints on its own connection after commits (``nudge()``), at most one
/// an interval, and once a second when nothing committed (writes that do
/// not nudge: API keys, migrations; the wait is by the wall clock, so a clock
/// set back only delays that look). A passive
/// checkpoint never blocks the writer or readers. When the log has grown past
/// ``restartAfterFrames``, a RESTART checkpoint copies the few frames the
/// passive ones left and starts the log over (holding the writer back for
/// only that long). If this thread fell behind, the writer's own checkpoint at
/// the limit would bound the log.
final class Checkpointer: Sendable {
    /// The writer's own automatic checkpoint, a backstop (pages of 4 KiB).
    static let writerLimitPages = 16_384
    /// Past this many frames in the log (16 MiB), a pass restarts it.
    static let restartAfterFrames = 4_096
    /// How long an idle checkpointer sleeps before it looks anyway (writes
    /// that do not nudge it: API keys, migrations).
    static let idleLook: Duration = .seconds(1)

    private final class Signal: @unchecked Sendable {
        let stopped = Atomic<Bool>(false)
        /// A commit happened since the last pass.
        let pending = Atomic<Bool>(false)
        let condition = NSCondition()
    }

    private let signal = Signal()

    init(path: String, configuration: Configuration, interval: Duration = .milliseconds(20)) throws {
        // Never wait on a lock: a RESTART that waited (for readers to leave the
        // log) would hold the write lock meanwhile and stall every commit, which
        // showed as p99 spikes of 100-200 ms under a long HTTP load. A busy pass
        // fails at once and the next one tries again.
        var configuration = configuration
        configuration.busyMode = .immediateError
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let thread = Thread { [signal] in
            let nanoseconds = interval.nanoseconds
            while !signal.stopped.load(ordering: .acquiring) {
                // Passes follow commits, at most one an interval: an idle store
                // (a host between payments, a test's gateway at rest) costs a
                // wake-up a second, not fifty.
                signal.condition.lock()
                if !signal.pending.load(ordering: .acquiring) && !signal.stopped.load(ordering: .acquiring) {
                    _ = signal.condition.wait(until: Date(timeIntervalSinceNow: Double(Self.idleLook.nanoseconds) / 1e9))
                }
                signal.condition.unlock()
                if signal.stopped.load(ordering: .acquiring) { break }
                signal.pending.store(false, ordering: .releasing)
                // A failed pass (the disk, a busy lock) is retried on the next.
                _ = try? connection.writeWithoutTransaction { db in
                    let pass = try db.checkpoint(.passive)
                    if pass.walFrameCount >= Self.restartAfterFrames {
                        // The log restarts only once every frame is copied and
                        // no reader still uses it, which passive passes under
                        // a steady load rarely see. RESTART waits for that
                        // moment; the frames left to copy are the last few.
                        _ = try db.checkpoint(.restart)
                    }
                }
                var wait = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
                nanosleep(&wait, nil)
            }
        }
        thread.name = "sqlite-checkpointer"
        thread.start()
    }

    /// A commit wrote to the log: a pass follows (within the interval).
    /// Cheap enough for every commit: one atomic exchange, and a wake-up only
    /// for the first commit since the last pass.
    func nudge() {
        guard !signal.pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        signal.condition.lock()
        signal.condition.signal()
        signal.condition.unlock()
    }

    /// Ends the thread after its current pass.
    func stop() {
        signal.stopped.store(true, ordering: .releasing)
        signal.condition.lock()
        signal.condition.signal()
        signal.condition.unlock()
    }

    deinit { stop() }
}
