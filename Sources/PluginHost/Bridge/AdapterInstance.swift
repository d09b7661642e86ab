import Dispatch
import Foundation
import GatewayPayloads
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

/// One live adapter instance: the host's handle for invoking operations on it.
///
/// Every call goes through the libffi bridge; each resolves exactly once, by the
/// adapter's completion, by refusal, by its deadline, or by the caller's
/// cancellation (the adapter is then told to `cancel`).
public final class AdapterInstance: Sendable {
    public let manifest: Manifest
    /// What the adapter says it implements (a superset of the manifest's claims).
    public let adapterDescription: AdapterDescription
    /// The negotiated ABI version.
    public let abiMajor: UInt32
    public let abiMinor: UInt32
    /// The library file actually mapped (the content-addressed copy) and its digest.
    public let libraryPath: String
    public let librarySHA256: String

    let functions: AdapterFunctions
    let instance: SendablePointer
    let context: HostContext
    let hostTable: HostServiceTable
    /// Where the host's own calls into the adapter (cancels) run: never on
    /// the deadline sweeper's thread or a caller's.
    let hostCalls: AdapterCallQueue
    /// The invokes running in the adapter now (to report one that blocks).
    let invokes: InvokeWatch
    /// Set by ``shutdown(grace:)``: no new calls.
    private let closed = Atomic<Bool>(false)
    private let destroyed = Atomic<Bool>(false)

    init(manifest: Manifest, description: AdapterDescription, abiMajor: UInt32, abiMinor: UInt32,
         libraryPath: String, librarySHA256: String, functions: AdapterFunctions,
         instance: UnsafeMutableRawPointer, context: HostContext, hostTable: HostServiceTable) {
        self.manifest = manifest
        self.adapterDescription = description
        self.abiMajor = abiMajor
        self.abiMinor = abiMinor
        self.libraryPath = libraryPath
        self.librarySHA256 = librarySHA256
        self.functions = functions
        self.instance = SendablePointer(instance)
        self.context = context
        self.hostTable = hostTable
        let logger = context.logger
        let id = manifest.id
        hostCalls = AdapterCallQueue(label: "adapter-\(manifest.id.prefix(40))") { job, elapsed in
            logger.error("""
                adapter \(id): its \(job) has not returned after \(elapsed / 1_000_000) ms (the bound is \(AdapterCallQueue.blockedBound / 1_000_000) ms). \
                In process, the host can only report an adapter that blocks; its later cancels wait, other adapters are not affected. \
                Only "isolation": "process" (not offered by this host yet) could contain it
                """)
        }
        invokes = InvokeWatch { callID, elapsed in
            logger.error("""
                adapter \(id): its invoke of call \(callID) has not returned after \(elapsed / 1_000_000) ms (the bound is \(AdapterCallQueue.blockedBound / 1_000_000) ms). \
                invoke must return at once and finish its work elsewhere; in process, this one holds one of the host's threads until it returns \
                and the host can only report it. Only "isolation": "process" (not offered by this host yet) could contain it
                """)
        }
        let cancel = functions.cancel
        let pointer = self.instance
        let queue = hostCalls
        let invokes = self.invokes
        // Timed-out calls are cancelled in the adapter, on its own queue (the
        // instance is never freed while it owes completions or a queued
        // cancel, so the pointer stays valid).
        if let cancel {
            context.calls.onTimeout { callID in queue.enqueue("cancel") { cancel.callVoid(pointer.pointer, callID) } }
        }
        context.calls.watch { now in
            queue.checkBlocked(now: now)
            invokes.checkBlocked(now: now)
        }
    }

    /// Calls into the adapter (invokes, cancels) that ran longer than the
    /// documented bound: each is logged once, naming `"isolation": "process"`
    /// as the remedy.
    public var blockedCalls: Int { hostCalls.blockedCount + invokes.blockedCount }

    /// Invokes `operation` with a request document and waits for its outcome.
    ///
    /// - Parameter timeout: the deadline; the manifest's `timeout_ms` when nil.
    public func invoke(_ operation: PaymentOperation, payload: some ContiguousBytes & Sendable, timeout: Duration? = nil) async -> CallOutcome {
        let calls = context.calls
        let callID = calls.makeCallID()
        let limit = timeout ?? .milliseconds(manifest.timeoutMilliseconds)
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<CallOutcome, Never>) in
                calls.register(callID, continuation: continuation, timeout: UInt64(max(limit.nanoseconds, 0)))
                if closed.load(ordering: .acquiring) {
                    calls.resolve(callID, with: .refused(status: ABIStatus.busy.rawValue))
                    return
                }
                if Task.isCancelled {
                    calls.resolve(callID, with: .refused(status: ABIStatus.cancelled.rawValue))
                    return
                }
                let status = invokes.watching(callID) {
                    payload.withUnsafeBytes { bytes in
                        functions.invoke.callInvoke(instance.pointer, callID, operation.code, bytes.baseAddress, bytes.count)
                    }
                }
                if status != 0 { calls.refused(callID, status: status) }
            }
        } onCancel: {
            if calls.resolve(callID, with: .cancelled) { self.cancelInAdapter(callID) }
        }
    }

    /// Invokes `operation` with `request` and decodes its result document as `Result`.
    public func call<Request: JSONPayload, Result: JSONPayload>(
        _ operation: PaymentOperation, _ request: Request, as result: Result.Type, timeout: Duration? = nil
    ) async throws(AdapterCallError) -> Result {
        switch await invoke(operation, payload: request.jsonBytes(), timeout: timeout) {
        case .completed(let status, let document) where status == 0:
            do { return try Result(jsonData: document) }
            catch { throw .malformedResult("\(operation.rawValue) result does not match its schema: \(error)") }
        case .completed(let status, let document):
            throw .failed(ABIStatus(rawValue: status), message: Self.message(in: document))
        case .refused(let status):
            throw .refused(ABIStatus(rawValue: status), message: "invoke refused the call; nothing was sent")
        case .timedOut:
            throw .timedOut
        case .cancelled:
            throw .cancelled
        }
    }

    /// Invokes a payment operation and returns its result document.
    public func call<Request: JSONPayload>(_ operation: PaymentOperation, _ request: Request, timeout: Duration? = nil) async throws(AdapterCallError) -> AdapterResult {
        try await call(operation, request, as: AdapterResult.self, timeout: timeout)
    }

    /// Completions the adapter sent that it should not have (second completions,
    /// completions of ids never issued).
    public var protocolViolations: (count: Int, first: [ProtocolViolation]) { context.calls.violations }

    /// Whether ``shutdown(grace:)`` has begun: new calls are refused with `GW_E_BUSY`.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Whether ``shutdown(grace:)`` has destroyed the instance (after every
    /// call on it resolved).
    public var isDestroyed: Bool { destroyed.load(ordering: .acquiring) }

    /// Calls the adapter still owes a completion for.
    public var outstandingCalls: Int { context.calls.outstanding }

    /// Stops the instance: new calls are refused with `GW_E_BUSY`; calls in
    /// flight get up to `grace` to complete, then are cancelled (resolved as
    /// `cancelled` for their callers, and cancelled in the adapter). The adapter's
    /// `destroy` runs only once every completion it owes has arrived; an adapter
    /// that never completes a call is never destroyed (its memory is leaked
    /// rather than freed under a running worker) and the host logs it.
    /// The library stays mapped and the host table valid in every case. A
    /// destroyed instance gives back its share of the egress connection pool.
    /// Returns whether the instance was destroyed.
    @discardableResult
    public func shutdown(grace: Duration = .seconds(5)) async -> Bool {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let clock = ContinuousClock()
        var end = clock.now + grace
        while context.calls.outstanding > 0, clock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if context.calls.outstanding > 0 {
            for callID in context.calls.cancelAll() { cancelInAdapter(callID) }
            end = clock.now + grace
            while context.calls.outstanding > 0, clock.now < end {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        guard context.calls.outstanding == 0 else {
            context.logger.error("adapter \(manifest.id) still owes \(context.calls.outstanding) completion(s) after cancel; not destroying it")
            hostCalls.stop()
            return false
        }
        // A cancel still queued or running would use the instance, and so would
        // an invoke that completed its call before returning (the header allows
        // it): destroy only after both. (Every call resolved first, then no
        // invoke running: an invoke that passed the closed check was counted
        // as outstanding until it completed.)
        end = clock.now + grace
        while !hostCalls.isIdle || invokes.isRunning, clock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard hostCalls.isIdle, !invokes.isRunning else {
            hostCalls.stop()
            context.logger.error("adapter \(manifest.id): a cancel or an invoke has not returned; not destroying it")
            return false
        }
        // On the adapter's own thread, never a Swift concurrency thread.
        hostCalls.enqueue("destroy") { [self] in
            functions.destroy.callVoid(instance.pointer)
            destroyed.store(true, ordering: .releasing)
        }
        hostCalls.stop()
        end = clock.now + grace
        while !isDestroyed, clock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard isDestroyed else {
            context.logger.error("adapter \(manifest.id): its destroy has not returned")
            return false
        }
        await context.closeEgress()
        return true
    }

    private func cancelInAdapter(_ callID: UInt64) {
        guard let cancel = functions.cancel else { return }
        let pointer = instance
        hostCalls.enqueue("cancel") { cancel.callVoid(pointer.pointer, callID) }
    }

    static func message(in document: Data) -> String {
        if let error = try? ErrorDocument(jsonData: document) { return error.message }
        return document.isEmpty ? "(no message)" : String(decoding: document.prefix(300), as: UTF8.self)
    }

    static func decodingSummary(_ error: Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ c: DecodingError.Context) -> String {
            "$" + c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let c): return "\(path(c)).\(key.stringValue) is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return "\(path(c)): \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
