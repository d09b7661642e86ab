import Foundation
import Synchronization

/// The adapter functions of one loaded library, each with its prepared cif.
struct AdapterFunctions: Sendable {
    var create: ForeignFunction
    var describe: ForeignFunction
    var invoke: ForeignFunction
    var cancel: ForeignFunction?
    var destroy: ForeignFunction
    var free: ForeignFunction
}

/// An adapter instance in the host's own address space, called through the
/// libffi bridge.
///
/// `invoke` runs on the caller's thread (it must return at once); every call
/// the host makes on its own initiative (cancels, `destroy`) runs on the
/// adapter's own ``AdapterCallQueue``, never on the sweeper's or a Swift
/// concurrency thread. An invoke or cancel that blocks past the bound is
/// reported, which is all in-process isolation can do about it.
final class InProcessConnection: AdapterConnection {
    let isolation = Manifest.Isolation.inProcess
    let binding: AdapterBinding
    let instance: SendablePointer
    /// Kept for the process's lifetime: an adapter thread that calls a service
    /// after `destroy` must find valid code.
    let hostTable: HostServiceTable
    let hostCalls: AdapterCallQueue
    let invokes: InvokeWatch
    private let destroyed = Atomic<Bool>(false)

    init(binding: AdapterBinding, instance: UnsafeMutableRawPointer, hostTable: HostServiceTable, context: HostContext) {
        self.binding = binding
        self.instance = SendablePointer(instance)
        self.hostTable = hostTable
        let logger = context.logger
        let id = context.adapterID
        hostCalls = AdapterCallQueue(label: "adapter-\(id.prefix(40))") { job, elapsed in
            logger.error("""
                adapter \(id): its \(job) has not returned after \(elapsed / 1_000_000) ms (the bound is \(AdapterCallQueue.blockedBound / 1_000_000) ms). \
                In process, the host can only report an adapter that blocks; its later cancels wait, other adapters are not affected. \
                Run it with "isolation": "process" in its manifest to contain it
                """)
        }
        invokes = InvokeWatch { callID, elapsed in
            logger.error("""
                adapter \(id): its invoke of call \(callID) has not returned after \(elapsed / 1_000_000) ms (the bound is \(AdapterCallQueue.blockedBound / 1_000_000) ms). \
                invoke must return at once and finish its work elsewhere; in process, this one holds one of the host's threads until it returns \
                and the host can only report it. Run it with "isolation": "process" in its manifest to contain it
                """)
        }
        let queue = hostCalls
        let invokes = self.invokes
        context.calls.watch { now in
            queue.checkBlocked(now: now)
            invokes.checkBlocked(now: now)
        }
    }

    var blockedCalls: Int { hostCalls.blockedCount + invokes.blockedCount }
    var health: AdapterHealth { destroyed.load(ordering: .acquiring) ? .closed : .ready }

    func invoke(_ callID: UInt64, _ operation: Int32, _ payload: UnsafeRawBufferPointer, timeout: UInt64) -> Int32 {
        invokes.watching(callID) {
            binding.functions.invoke.callInvoke(instance.pointer, callID, operation, payload.baseAddress, payload.count)
        }
    }

    func cancel(_ callID: UInt64) {
        guard let cancel = binding.functions.cancel else { return }
        let pointer = instance
        // The instance is never freed while it owes completions or a queued
        // cancel, so the pointer stays valid.
        hostCalls.enqueue("cancel") { cancel.callVoid(pointer.pointer, callID) }
    }

    func destroy(grace: Duration) async -> Bool {
        // A cancel still queued or running would use the instance, and so would
        // an invoke that completed its call before returning (the header allows
        // it): destroy only after both. (Every call resolved first, then no
        // invoke running: an invoke that passed the closed check was counted
        // as outstanding until it completed.)
        guard await Poll.until(grace, { hostCalls.isIdle && !invokes.isRunning }) else {
            abandon(reason: "a cancel or an invoke has not returned")
            return false
        }
        // On the adapter's own thread, never a Swift concurrency thread.
        hostCalls.enqueue("destroy") { [self] in
            binding.destroy(instance.pointer!)
            destroyed.store(true, ordering: .releasing)
        }
        hostCalls.stop()
        return await Poll.until(grace) { destroyed.load(ordering: .acquiring) }
    }

    func abandon(reason: String) {
        hostCalls.stop()
    }
}
