import Foundation
import PluginHost
import Synchronization

/// The runner's frame reader: one thread at a time reads the socket.
///
/// `invoke` must return at once (the header says so), so the reader calls it
/// inline: a thread handoff per call would cost more than the rest of the
/// round trip. An adapter that breaks that rule must not stop the reader from
/// delivering cancels, secrets and HTTP results, so the reader's role moves on:
/// a watchdog hands it to a new thread when an inline invoke has run past
/// ``handOverAfter``, and `secret_get` hands it over at once when it is called
/// from inside one (its answer needs a reader). The old thread finishes its
/// invoke and ends. Cancels run on dispatch threads.
/// End of file (the host is gone) ends the process at once: there is no one
/// left to report to.
///
/// Between frames the reader spins for up to ``spinLimit`` (non-blocking
/// reads, yielding the CPU on every turn) before it blocks: while calls come
/// one after another, the next INVOKE is read by a thread that never slept,
/// so the host's write wakes no one here (on a small VM that wake-up is
/// most of a hop). The spin happens only between frames, never inside an
/// invoke, so it changes nothing of the above; it stops for a runner whose
/// frames come far apart (``AdaptiveSpin``).
final class RunnerLoop: @unchecked Sendable {
    /// How long an inline invoke may hold the reader's role.
    static let handOverAfter: UInt64 = 10_000_000
    /// How long the reader may spin for its next frame: the host's turn
    /// between an answer and the next call (its reader's wake, the caller's
    /// decoding and encoding), with room on a slow 2-core VM.
    static let spinLimit: UInt64 = 50_000

    private struct Reader {
        /// Which reader thread holds the role (a hand-over increments it).
        var generation: UInt64 = 0
        /// The holder is inside an inline invoke, since when (monotonic ns).
        var invokeSince: UInt64?
        var thread: pthread_t?
        /// Invokes started; the watchdog parks when it sees none for a tick.
        var started: UInt64 = 0
        var watchdogParked = false
        /// Former readers still inside the invoke that cost them the role:
        /// their generation, and since when that invoke runs (monotonic ns).
        var formerReaders: [UInt64: UInt64] = [:]
    }

    let channel: FrameChannel
    let services: RunnerServices
    let binding: AdapterBinding
    private let reader = Mutex(Reader())
    private let watchdogWake = DispatchSemaphore(value: 0)
    private let instance = Mutex<SendableInstance?>(nil)
    /// Invokes running in the adapter now (destroy waits for them).
    private let running = DispatchGroup()
    private let calls = DispatchQueue(label: "adapter-calls", attributes: .concurrent)

    init(channel: FrameChannel, services: RunnerServices, binding: AdapterBinding) {
        self.channel = channel
        self.services = services
        self.binding = binding
    }

    func start() {
        startReader(generation: 0)
        let watchdog = Thread { [self] in watch() }
        watchdog.name = "runner-watchdog"
        watchdog.start()
    }

    private func startReader(generation: UInt64) {
        let thread = Thread { [self] in run(generation: generation) }
        thread.name = "runner-frames-\(generation)"
        thread.start()
    }

    /// Moves the reader's role to a new thread, if the holder is inside an
    /// inline invoke (only then is it away from the socket).
    func handOver() {
        let now = Self.now()
        let handed: (next: UInt64, stuck: Int, former: Int)? = reader.withLock { reader in
            guard let since = reader.invokeSince else { return nil }
            reader.formerReaders[reader.generation] = since
            reader.generation += 1
            reader.invokeSince = nil
            let stuck = reader.formerReaders.values.filter { now > $0 && now - $0 > Self.stuckAfter }.count
            return (reader.generation, stuck, reader.formerReaders.count)
        }
        guard let handed else { return }
        // Slow invokes on a starved machine are handed over too; only ones
        // that stay inside the adapter count as stuck (or too many at once).
        if handed.stuck > Self.maxStuckReaders || handed.former > Self.maxFormerReaders {
            FileHandle.standardError.write(Data("gateway-runner: \(Self.maxStuckReaders) invokes have not returned; an adapter whose invokes block cannot be served\n".utf8))
            _exit(5)
        }
        startReader(generation: handed.next)
    }

    /// How many invokes may be stuck (inside the adapter for more than
    /// ``stuckAfter``), each holding a former reader thread, before the runner
    /// gives up (its host then restarts it, or quarantines it).
    static let maxStuckReaders = 16
    /// How long an invoke may run before it counts as stuck: a slow one (a
    /// thread started on a starved machine) is not a blocked one.
    static let stuckAfter: UInt64 = 1_000_000_000
    /// Former reader threads at most, stuck or not (threads stay bounded).
    static let maxFormerReaders = 256

    /// Whether the calling thread is the reader, inside an inline invoke
    /// (`secret_get` must then hand the role over before it waits).
    var callerHoldsTheReader: Bool {
        reader.withLock { reader in
            guard reader.invokeSince != nil, let thread = reader.thread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
    }

    private func watch() {
        var seen: UInt64 = 0
        while true {
            let park: Bool = reader.withLock { reader in
                defer { seen = reader.started }
                guard reader.invokeSince == nil, reader.started == seen else { return false }
                reader.watchdogParked = true
                return true
            }
            if park { watchdogWake.wait() }
            usleep(UInt32(Self.handOverAfter / 2_000))
            let late = reader.withLock { reader in
                guard let since = reader.invokeSince else { return false }
                let now = Self.now()
                return now > since && now - since > Self.handOverAfter
            }
            if late { handOver() }
        }
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The created instance: invokes are served from now on.
    func serve(_ pointer: UnsafeMutableRawPointer) {
        instance.withLock { $0 = SendableInstance(pointer: pointer) }
    }

    private func run(generation: UInt64) {
        reader.withLock { $0.thread = pthread_self() }
        while reader.withLock({ $0.generation == generation }) {
            let frame: Frame
            do {
                guard let next = try channel.next() else { _exit(0) }
                frame = next
            } catch {
                FileHandle.standardError.write(Data("gateway-runner: \(error)\n".utf8))
                _exit(4)
            }
            handle(frame, generation: generation)
        }
    }

    private func handle(_ frame: Frame, generation: UInt64) {
        switch frame.kind {
        case .invoke:
            guard let pointer = instance.withLock({ $0 }) else {
                refuse(frame.id, status: 7 /* GW_E_BUSY */)
                return
            }
            let callID = frame.id
            let operation = frame.int32(at: 0)
            let request = Data(frame.rest(from: 8))
            running.enter()
            let wake = reader.withLock { reader -> Bool in
                reader.invokeSince = Self.now()
                reader.started &+= 1
                defer { reader.watchdogParked = false }
                return reader.watchdogParked
            }
            if wake { watchdogWake.signal() }
            let status = request.withUnsafeBytes { binding.invoke(pointer.pointer, callID, operation, $0) }
            // Still the reader unless the role was handed over meanwhile (then
            // this thread's loop ends: the new reader owns the socket).
            reader.withLock { reader in
                if reader.generation == generation { reader.invokeSince = nil } else { reader.formerReaders[generation] = nil }
            }
            running.leave()
            if status != 0 { refuse(callID, status: status) }
        case .cancel:
            guard let pointer = instance.withLock({ $0 }) else { return }
            let callID = frame.id
            calls.async { [self] in binding.cancel(pointer.pointer, callID) }
        case .secretValue:
            services.deliverSecret(id: frame.id, status: frame.int32(at: 0), fullLength: frame.uint64(at: 4), value: frame.rest(from: 12))
        case .httpResult:
            services.deliverHTTPResult(id: frame.id, status: frame.int32(at: 0), document: Data(frame.rest(from: 4)))
        case .destroy:
            let pointer = instance.withLock { current -> SendableInstance? in
                defer { current = nil }
                return current
            }
            calls.async(flags: .barrier) { [self] in
                running.wait()
                // The host sends DESTROY only after writing every answer it
                // owed (each read before this frame): their callbacks are
                // dispatched, and each returns before destroy.
                services.beginDestroying()
                services.callbacksRunning.wait()
                if let pointer { binding.destroy(pointer.pointer) }
                try? channel.send(.destroyed, id: 0)
                _exit(0)
            }
        default:
            FileHandle.standardError.write(Data("gateway-runner: the host sent a \(frame.kind) frame, which only a runner sends\n".utf8))
            _exit(4)
        }
    }

    private func refuse(_ callID: UInt64, status: Int32) {
        do { try channel.send(.refused, id: callID, prefix: .int32(status)) } catch { _exit(0) }
    }
}

/// The adapter's instance pointer, carried to a dispatch thread.
struct SendableInstance: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}
