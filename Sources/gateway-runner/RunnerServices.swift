import Foundation
import PluginHost
import Synchronization

/// The host services of the adapter in this runner, served by the host over
/// frames: `log`, `http_send`, `wallet_decrypt`, `secret_get` and `complete` go to the host,
/// which applies the same policy as in process. `secret_get` of a secret the
/// host gave at LOAD is answered here, from memory: no thread waits on the
/// host for it. (The clocks and random bytes carry no policy and are
/// answered by the host table here.)
final class RunnerServices: HostServiceBackend, @unchecked Sendable {
    private final class SecretSlot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var status: Int32 = 0
        var fullLength: UInt64 = 0
        var value: [UInt8] = []
    }

    private struct HTTPWait: @unchecked Sendable {
        var callback: UnsafeRawPointer
        var userData: UnsafeMutableRawPointer?
    }

    let channel: FrameChannel
    /// Set once the loop exists: `secret_get` from inside an inline invoke
    /// hands the reader's role over before it waits for the answer.
    weak var loop: RunnerLoop?
    private let nextRequest = Atomic<UInt64>(1)
    private let secrets = Mutex<[UInt64: SecretSlot]>([:])
    /// The requests waiting for their HTTP_RESULT, and whether DESTROY
    /// began (``beginDestroying()``): from then on no request is taken and
    /// no callback dispatched, so none can start after the wait. One lock.
    private let requests = Mutex<(waiting: [UInt64: HTTPWait], destroying: Bool)>(([:], false))

    /// The secrets the host gave this runner at LOAD (``RunnerLoad/secrets``):
    /// `secret_get` answers them from here, with no round trip; any other
    /// name goes to the host, whose answer is as in process.
    private let held: [String: [UInt8]]

    init(channel: FrameChannel, secrets: [String: String] = [:]) {
        self.channel = channel
        held = secrets.compactMapValues { Data(base64Encoded: $0).map(Array.init) }
    }

    func log(level: Int32, message: UnsafeRawBufferPointer) {
        // The host logs at most 8 KiB of a line; send no more.
        let kept = UnsafeRawBufferPointer(rebasing: message.prefix(8192))
        send { try channel.send(.log, id: 0, prefix: .int32(level), body: kept) }
    }

    func httpSend(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
        forward(.httpSend, service: "http_send", request: request, callback: callback, userData: userData)
    }

    func walletDecrypt(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
        forward(.walletDecrypt, service: "wallet_decrypt", request: request, callback: callback, userData: userData)
    }

    /// Sends a callback-style request to the host; its HTTP_RESULT frame fires the callback.
    private func forward(_ kind: FrameKind, service: String, request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?,
                         userData: UnsafeMutableRawPointer?) {
        guard let callback else {
            Array("adapter called \(service) without a callback; request dropped".utf8).withUnsafeBytes { log(level: 4, message: $0) }
            return
        }
        let id = nextRequest.add(1, ordering: .relaxed).oldValue
        guard requests.withLock({ requests in
            if !requests.destroying { requests.waiting[id] = HTTPWait(callback: callback, userData: userData) }
            return !requests.destroying
        }) else {
            Array("adapter called \(service) while its instance is being destroyed; request dropped, no callback".utf8)
                .withUnsafeBytes { log(level: 4, message: $0) }
            return
        }
        do {
            try channel.send(kind, id: id, body: request)
        } catch .tooLarge(let size) {
            // Never sent: GW_E_DENIED, which the header lists for a request refused before it left.
            let document = Data(#"{"message":"the request of \#(size) bytes is too large for the host; nothing was sent"}"#.utf8)
            deliverHTTPResult(id: id, status: 9 /* GW_E_DENIED */, document: document)
        } catch {
            _exit(0)
        }
    }

    /// HTTP_RESULT: the adapter's callback runs on a dispatch thread, never
    /// the frame reader's (so it may call other services).
    /// Entered by each callback before it is dispatched, left once it
    /// returned: DESTROY waits for it (no callback runs after `destroy`).
    let callbacksRunning = DispatchGroup()
    /// Closes to new requests and callbacks; then wait on ``callbacksRunning``.
    func beginDestroying() {
        requests.withLock { $0.destroying = true }
    }

    func deliverHTTPResult(id: UInt64, status: Int32, document: Data) {
        let wait = requests.withLock { requests -> HTTPWait? in
            guard let wait = requests.waiting.removeValue(forKey: id), !requests.destroying else { return nil }
            callbacksRunning.enter()
            return wait
        }
        guard let wait else { return }
        DispatchQueue.global().async { [callbacksRunning] in
            document.withUnsafeBytes { bytes in
                HostServiceTable.callHTTPCallback(wait.callback, userData: wait.userData, status: status, document: bytes)
            }
            callbacksRunning.leave()
        }
    }

    func secret(named name: String, into out: UnsafeMutableRawPointer?, capacity: Int, length: UnsafeMutablePointer<Int>?) -> Int32 {
        // The host refuses longer names; so does the host table in process (not found).
        guard name.utf8.count <= 256 else { return 8 /* GW_E_NOT_FOUND */ }
        if let value = held[name] {
            length?.pointee = value.count
            guard value.count <= capacity, let out else { return 11 /* GW_E_BUFFER_TOO_SMALL */ }
            value.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
            return 0
        }
        if let loop, loop.callerHoldsTheReader { loop.handOver() }
        let id = nextRequest.add(1, ordering: .relaxed).oldValue
        let slot = SecretSlot()
        secrets.withLock { $0[id] = slot }
        send {
            var prefix = FramePrefix()
            prefix.append(UInt64(max(capacity, 0)))
            try Array(name.utf8).withUnsafeBytes { try channel.send(.secretGet, id: id, prefix: prefix, body: $0) }
        }
        // The host always answers; if it is gone, the reader ends the process.
        slot.done.wait()
        defer { for i in slot.value.indices { slot.value[i] = 0 } }
        length?.pointee = Int(slot.fullLength)
        guard slot.status == 0 else { return slot.status }
        guard slot.value.count <= capacity, let out else { return 11 /* GW_E_BUFFER_TOO_SMALL */ }
        slot.value.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: slot.value.count) }
        return 0
    }

    /// SECRET_VALUE: wakes the adapter thread waiting in `secret_get`.
    func deliverSecret(id: UInt64, status: Int32, fullLength: UInt64, value: UnsafeRawBufferPointer) {
        guard let slot = secrets.withLock({ $0.removeValue(forKey: id) }) else { return }
        slot.status = status
        slot.fullLength = fullLength
        slot.value = Array(value)
        slot.done.signal()
    }

    func complete(callID: UInt64, status: Int32, result: UnsafeRawBufferPointer) {
        if result.count > ResultLimit.maxBytes {
            send { try channel.send(.complete, id: callID, flags: FrameFlag.tooLarge, prefix: .int32(status)) }
        } else {
            send { try channel.send(.complete, id: callID, prefix: .int32(status), body: result) }
        }
    }

    /// A frame the host will never read: the host is gone, and so is the point.
    private func send(_ write: () throws -> Void) {
        do { try write() } catch { _exit(0) }
    }
}
