import Dispatch
import Foundation
import GatewayPayloads
import Synchronization

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

    /// The transport: the libffi bridge in process, or a runner process.
    let connection: any AdapterConnection
    let context: HostContext
    /// Set by ``shutdown(grace:)``: no new calls.
    private let closed = Atomic<Bool>(false)
    private let destroyed = Atomic<Bool>(false)
    /// Set once ``shutdown(grace:)`` reached the host service callbacks
    /// (no completion owed any more); tests watch it.
    let reachedCallbacks = Atomic<Bool>(false)

    init(manifest: Manifest, description: AdapterDescription, abiMajor: UInt32, abiMinor: UInt32,
         libraryPath: String, librarySHA256: String, connection: any AdapterConnection, context: HostContext) {
        self.manifest = manifest
        self.adapterDescription = description
        self.abiMajor = abiMajor
        self.abiMinor = abiMinor
        self.libraryPath = libraryPath
        self.librarySHA256 = librarySHA256
        self.connection = connection
        self.context = context
        // Timed-out calls are cancelled in the adapter; the connection only
        // queues the cancel (this runs on the deadline sweeper's thread).
        context.calls.onTimeout { [weak connection] callID in connection?.cancel(callID) }
    }

    /// Where the adapter runs.
    public var isolation: Manifest.Isolation { connection.isolation }

    /// Whether it can take calls now (a runner may be restarting or quarantined).
    public var health: AdapterHealth { isClosed ? .closed : connection.health }

    /// Under `"isolation": "process"`: whether its runner has no network of its
    /// own (and if not, why); nil in process.
    public var networkConfinement: NetworkConfinement? { (connection as? RunnerConnection)?.network }
    /// Under `"isolation": "process"`: the runner's sandbox layers, as /proc shows them.
    public var sandbox: SandboxReport? { (connection as? RunnerConnection)?.sandbox }

    /// Under `"isolation": "process"`: its runner's pid (the last one's while
    /// restarting), and how many times its runners ended and were restarted.
    public var runner: (pid: Int32, crashes: Int, restarts: Int)? {
        guard let runner = connection as? RunnerConnection else { return nil }
        return (runner.runnerPID, runner.crashes, runner.restarts)
    }

    /// Under `"isolation": "process"`: the process that runs the adapter code
    /// (the runner's pid is its supervisor's, outside its PID namespace).
    public var adapterProcess: Int32? { (connection as? RunnerConnection)?.adapterPID }

    /// Calls into the adapter (invokes, cancels) that ran longer than the
    /// documented bound: each is logged once, naming `"isolation": "process"`
    /// as the remedy.
    public var blockedCalls: Int { connection.blockedCalls }

    /// Invokes `operation` with a request document and waits for its outcome.
    ///
    /// - Parameter timeout: the deadline; the manifest's `timeout_ms` when nil.
    public func invoke(_ operation: PaymentOperation, payload: some ContiguousBytes & Sendable, timeout: Duration? = nil) async -> CallOutcome {
        await invoke(code: operation.code, payload: payload, timeout: timeout)
    }

    /// Invokes the `GW_OP_*` value `code`, which may be one no ABI version
    /// defines (what `gateway plugin check` probes an adapter with).
    func invoke(code: Int32, payload: some ContiguousBytes & Sendable, timeout: Duration? = nil) async -> CallOutcome {
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
                let status = payload.withUnsafeBytes { bytes in
                    // The header's GW_MAX_REQUEST_BYTES: never sent, in either isolation.
                    guard bytes.count <= RequestLimit.maxBytes else { return ABIStatus.invalidRequest.rawValue }
                    return connection.invoke(callID, code, bytes, timeout: UInt64(max(limit.nanoseconds, 0)))
                }
                if status != 0 { calls.refused(callID, status: status) }
            }
        } onCancel: {
            if calls.resolve(callID, with: .cancelled) { self.connection.cancel(callID) }
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
        case .lost(let reason):
            throw .connectionLost(reason)
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
    /// `destroy` runs only once every completion it owes has arrived and every
    /// callback of its `http_send`/`wallet_decrypt` requests has returned
    /// (``CallbackRequests``: waited for, then cancelled); an adapter
    /// that never completes a call is never destroyed (its memory is leaked
    /// rather than freed under a running worker) and the host logs it.
    /// The library stays mapped and the host table valid in every case. A
    /// destroyed instance gives back its share of the egress connection pool.
    /// Returns whether the instance was destroyed.
    @discardableResult
    public func shutdown(grace: Duration = .seconds(5)) async -> Bool {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let calls = context.calls
        if !(await Poll.until(grace) { calls.outstanding == 0 }) {
            for callID in calls.cancelAll() { connection.cancel(callID) }
            _ = await Poll.until(grace) { calls.outstanding == 0 }
        }
        guard !Task.isCancelled else { return cutShort() }
        guard calls.outstanding == 0 else {
            context.logger.error("adapter \(manifest.id) still owes \(calls.outstanding) completion(s) after cancel; not destroying it")
            connection.abandon(reason: "it still owes completions after cancel")
            return false
        }
        // Nor while a callback of an http_send or wallet_decrypt has not
        // returned (one may complete a call and still be running).
        reachedCallbacks.store(true, ordering: .releasing)
        let drained = await context.callbackRequests.drain(grace: grace)
        guard !Task.isCancelled else { return cutShort() }
        guard drained else {
            context.logger.error("adapter \(manifest.id): \(context.callbackRequests.inFlight) http_send/wallet_decrypt callback(s) have not returned after cancel; not destroying it")
            connection.abandon(reason: "a callback of its host service requests has not returned")
            return false
        }
        guard await connection.destroy(grace: grace) else {
            context.logger.error("adapter \(manifest.id): a cancel, an invoke or its destroy has not returned; not destroyed")
            return false
        }
        destroyed.store(true, ordering: .releasing)
        await context.closeEgress()
        return true
    }

    /// Shutdown cancelled (the host's shutdown bound passed): what is in
    /// flight is cancelled and the instance given up, not destroyed (safe:
    /// never freed under a running call or callback); the process is ending.
    private func cutShort() -> Bool {
        for callID in context.calls.cancelAll() { connection.cancel(callID) }
        context.callbackRequests.cancelAll()
        context.logger.error("adapter \(manifest.id): shutdown cut short (its time ran out) with \(context.calls.outstanding) completion(s) owed and \(context.callbackRequests.inFlight) callback(s) in flight; not destroyed")
        connection.abandon(reason: "shutdown was cut short")
        return false
    }

    static func message(in document: Data) -> String {
        if let error = try? ErrorDocument(jsonData: document) { return error.message }
        return document.isEmpty ? "(no message)" : String(decoding: document.prefix(300), as: UTF8.self)
    }
}
