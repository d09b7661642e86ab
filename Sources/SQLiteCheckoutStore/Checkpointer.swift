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
/// checkpoints on its own connection every few milliseconds. A passive
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

    private final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    private let stopped = Flag()

    init(path: String, configuration: Configuration, interval: Duration = .milliseconds(20)) throws {
        // Never wait on a lock: a RESTART that waited (for readers to leave the
        // log) would hold the write lock meanwhile and stall every commit, which
        // showed as p99 spikes of 100-200 ms under a long HTTP load. A busy pass
        // fails at once and the next one tries again.
        var configuration = configuration
        configuration.busyMode = .immediateError
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let thread = Thread { [stopped] in
            let nanoseconds = interval.nanoseconds
            while !stopped.raised.load(ordering: .acquiring) {
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

    /// Ends the thread after its current pass.
    func stop() {
        stopped.raised.store(true, ordering: .releasing)
    }

    deinit { stop() }
}
