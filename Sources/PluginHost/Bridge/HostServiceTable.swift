import CFFI
import Foundation

/// What serves the host services of one adapter instance: in the host, its
/// ``HostContext``; in a runner process, the frames to the host
/// (`gateway-runner`'s `RunnerServices`). The clocks and random bytes carry no
/// policy and are answered by the table itself, on either side.
package protocol HostServiceBackend: AnyObject, Sendable {
    func log(level: Int32, message: UnsafeRawBufferPointer)
    /// Starts one request; `callback(userData, status, document)` fires later,
    /// never on the caller's thread.
    func httpSend(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?)
    /// Starts one wallet token decryption (ABI 1.1); `callback` as for ``httpSend(request:callback:userData:)``.
    func walletDecrypt(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?)
    func secret(named name: String, into out: UnsafeMutableRawPointer?, capacity: Int, length: UnsafeMutablePointer<Int>?) -> Int32
    func complete(callID: UInt64, status: Int32, result: UnsafeRawBufferPointer)
}

/// The closures' user data: one box per table (an existential cannot be
/// passed through a raw pointer).
private final class BackendBox {
    let backend: any HostServiceBackend
    init(_ backend: any HostServiceBackend) { self.backend = backend }
}

/// The `gw_host_api` handed to one adapter instance: every member is a libffi
/// closure whose user data is that instance's ``HostServiceBackend``, so the
/// adapter calls plain C functions while the host knows exactly whose call it is.
///
/// The table and its closures are never freed: an adapter thread that (wrongly)
/// calls a service after `destroy` must find valid code, not a freed trampoline.
/// They cost a few hundred bytes per instance, and instances are created only
/// when an adapter is loaded or upgraded.
package final class HostServiceTable: @unchecked Sendable {
    /// The table, laid out for the negotiated ABI major version.
    package let pointer: UnsafeMutableRawPointer

    package init(backend: any HostServiceBackend, abiMajor: UInt32, abiMinor: UInt32) {
        guard let layout = SignatureTable.hostTable(major: abiMajor) else {
            preconditionFailure("host table requested for an ABI major the loader did not accept")
        }
        pointer = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: 8)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: layout.size)
        pointer.storeBytes(of: UInt32(layout.size), toByteOffset: 0, as: UInt32.self)
        pointer.storeBytes(of: abiMajor, toByteOffset: 4, as: UInt32.self)
        pointer.storeBytes(of: min(abiMinor, SignatureTable.hostMinor), toByteOffset: 8, as: UInt32.self)

        // One retain for the closures' lifetime (which is the process's).
        let userData = Unmanaged.passRetained(BackendBox(backend)).toOpaque()
        for (service, slot) in layout.slots {
            let cif = PreparedCIF.forSignature(slot.signature)
            var code: UnsafeMutableRawPointer?
            guard let closure = ffi_closure_alloc(MemoryLayout<ffi_closure>.size, &code)?
                .assumingMemoryBound(to: ffi_closure.self), let code
            else { preconditionFailure("ffi_closure_alloc failed: out of executable memory") }
            let status = ffi_prep_closure_loc(closure, cif.cif, Self.handler(for: service), userData, code)
            precondition(status == FFI_OK, "ffi_prep_closure_loc failed (\(status)) for \(service)")
            pointer.storeBytes(of: code, toByteOffset: slot.offset, as: UnsafeMutableRawPointer?.self)
        }
    }

    /// Calls an adapter's `http_send` callback with the response (or error) document.
    package static func callHTTPCallback(_ callback: UnsafeRawPointer, userData: UnsafeMutableRawPointer?, status: Int32, document: UnsafeRawBufferPointer) {
        ForeignFunction(address: callback, signature: SignatureTable.httpCallback)
            .callHTTPCallback(userData, status, document.baseAddress, document.count)
    }

    typealias Handler = @convention(c) (
        UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
        UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
    ) -> Void

    private static func handler(for service: HostService) -> Handler {
        switch service {
        case .log: logHandler
        case .httpSend: httpSendHandler
        case .secretGet: secretGetHandler
        case .clockUnixNs: clockUnixHandler
        case .clockMonotonicNs: clockMonotonicHandler
        case .randomBytes: randomBytesHandler
        case .complete: completeHandler
        case .walletDecrypt: walletDecryptHandler
        }
    }
}

// MARK: - Closure handlers
//
// libffi hands each handler pointers to the argument values and a return slot
// at least as wide as `ffi_arg` (8 bytes here): integral results narrower than
// that must be written widened.

@inline(__always)
private func backend(_ userData: UnsafeMutableRawPointer?) -> any HostServiceBackend {
    Unmanaged<BackendBox>.fromOpaque(userData!).takeUnretainedValue().backend
}

@inline(__always)
private func argument<T>(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ index: Int, as type: T.Type) -> T {
    args![index]!.load(as: T.self)
}

@inline(__always)
private func buffer(_ start: UnsafeRawPointer?, _ count: Int) -> UnsafeRawBufferPointer {
    start.map { UnsafeRawBufferPointer(start: $0, count: count) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
}

@inline(__always)
private func returnStatus(_ ret: UnsafeMutableRawPointer?, _ status: Int32) {
    ret!.storeBytes(of: Int64(status), as: Int64.self)
}

private let logHandler: HostServiceTable.Handler = { _, _, args, userData in
    let level = argument(args, 0, as: Int32.self)
    let message = argument(args, 1, as: UnsafeRawPointer?.self)
    let length = argument(args, 2, as: Int.self)
    backend(userData).log(level: level, message: buffer(message, length))
}

/// The arguments of a callback-style service (`http_send`, `wallet_decrypt`):
/// `(const uint8_t *request, size_t len, gw_http_callback, void *user_data)`.
@inline(__always)
private func callbackRequest(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?)
    -> (request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
    (buffer(argument(args, 0, as: UnsafeRawPointer?.self), argument(args, 1, as: Int.self)),
     argument(args, 2, as: UnsafeRawPointer?.self), argument(args, 3, as: UnsafeMutableRawPointer?.self))
}

private let httpSendHandler: HostServiceTable.Handler = { _, _, args, userData in
    let call = callbackRequest(args)
    backend(userData).httpSend(request: call.request, callback: call.callback, userData: call.userData)
}

private let walletDecryptHandler: HostServiceTable.Handler = { _, _, args, userData in
    let call = callbackRequest(args)
    backend(userData).walletDecrypt(request: call.request, callback: call.callback, userData: call.userData)
}

private let secretGetHandler: HostServiceTable.Handler = { _, ret, args, userData in
    let namePointer = argument(args, 0, as: UnsafeRawPointer?.self)
    let nameLength = argument(args, 1, as: Int.self)
    let out = argument(args, 2, as: UnsafeMutableRawPointer?.self)
    let capacity = argument(args, 3, as: Int.self)
    let outLength = argument(args, 4, as: UnsafeMutablePointer<Int>?.self)
    let name = namePointer.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: nameLength), as: UTF8.self) } ?? ""
    returnStatus(ret, backend(userData).secret(named: name, into: out, capacity: capacity, length: outLength))
}

private let clockUnixHandler: HostServiceTable.Handler = { _, ret, _, _ in
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    ret!.storeBytes(of: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec), as: Int64.self)
}

private let clockMonotonicHandler: HostServiceTable.Handler = { _, ret, _, _ in
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    ret!.storeBytes(of: UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec), as: UInt64.self)
}

private let randomBytesHandler: HostServiceTable.Handler = { _, ret, args, _ in
    let out = argument(args, 0, as: UnsafeMutableRawPointer?.self)
    let length = argument(args, 1, as: Int.self)
    guard let out else {
        returnStatus(ret, length == 0 ? 0 : 1)
        return
    }
    var generator = SystemRandomNumberGenerator()
    var offset = 0
    while offset < length {
        var word = generator.next()
        let n = min(8, length - offset)
        withUnsafeBytes(of: &word) { out.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
        offset += n
    }
    returnStatus(ret, 0)
}

private let completeHandler: HostServiceTable.Handler = { _, _, args, userData in
    let callID = argument(args, 0, as: UInt64.self)
    let status = argument(args, 1, as: Int32.self)
    let result = argument(args, 2, as: UnsafeRawPointer?.self)
    let length = argument(args, 3, as: Int.self)
    backend(userData).complete(callID: callID, status: status, result: buffer(result, length))
}
