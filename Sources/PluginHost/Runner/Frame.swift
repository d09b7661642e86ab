import Foundation
import GatewayPayloads
import Synchronization

/// The frames between the host and a `gateway-runner`, over one `AF_UNIX`
/// stream socket pair. Little-endian; a 16-byte header
/// (`u32 body length, u8 kind, u8 flags, u16 zero, u64 id`) and a body of at
/// most ``FrameChannel/maxBody`` bytes. The id is a call id (invoke, refused,
/// complete, cancel) or a request id (the host services the runner asks for).
/// The hot path is binary; the handshake's bodies are JSON (rare, and free to grow).
///
/// | kind | from | body |
/// |---|---|---|
/// | LOAD | host | JSON ``RunnerLoad`` |
/// | READY, LOAD_FAILED | runner | JSON ``RunnerReady``, ``RunnerLoadFailure`` |
/// | INVOKE | host | `i32 operation, u32 deadline ms`, request document |
/// | REFUSED | runner | `i32 status` (sent only when `invoke` refused: an accepted call costs no reply) |
/// | COMPLETE | runner | `i32 status`, result document (flag TOO_LARGE: over the host's limit, no document) |
/// | CANCEL | host | none |
/// | LOG | runner | `i32 level`, message |
/// | HTTP_SEND, HTTP_RESULT | runner, host | request document; `i32 status`, response document |
/// | WALLET_DECRYPT | runner | request document (answered by HTTP_RESULT, the same callback) |
/// | SECRET_GET, SECRET_VALUE | runner, host | `u64 capacity`, name; `i32 status, u64 full length`, value when it fits |
/// | DESTROY, DESTROYED | host, runner | none (then the runner exits 0) |
package enum FrameKind: UInt8, Sendable {
    case load = 0x01, ready = 0x02, loadFailed = 0x03
    case invoke = 0x10, refused = 0x11, complete = 0x12, cancel = 0x13
    case log = 0x20, httpSend = 0x21, httpResult = 0x22, secretGet = 0x23, secretValue = 0x24
    /// ABI 1.1's `wallet_decrypt`, answered (like `http_send`) by an `httpResult` frame.
    case walletDecrypt = 0x25
    case destroy = 0x30, destroyed = 0x31
}

package enum FrameFlag {
    /// COMPLETE: the result exceeded the host's limit and was not sent.
    package static let tooLarge: UInt8 = 1
}

/// Up to 16 bytes of fixed-size fields that precede a frame's variable part.
package struct FramePrefix: Sendable {
    package var words: (UInt64, UInt64) = (0, 0)
    package var count = 0

    package init() {}

    package static func int32(_ value: Int32) -> FramePrefix {
        var prefix = FramePrefix()
        prefix.append(UInt32(bitPattern: value))
        return prefix
    }

    package mutating func append(_ value: UInt32) { append(UInt64(value), bytes: 4) }
    package mutating func append(_ value: UInt64) { append(value, bytes: 8) }

    private mutating func append(_ value: UInt64, bytes: Int) {
        precondition(count + bytes <= 16)
        withUnsafeMutableBytes(of: &words) { raw in
            for i in 0..<bytes { raw[count + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
        }
        count += bytes
    }
}

/// Why a frame could not be sent or read.
package enum FrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer's buffer was full before any byte of the frame left: nothing was sent.
    case wouldBlock
    /// The frame is over ``FrameChannel/maxBody``: nothing was sent, the stream is fine.
    case tooLarge(Int)
    /// The stream is unusable (closed, reset, a partial frame written or read,
    /// an oversized or unknown frame).
    case broken(String)

    package var description: String {
        switch self {
        case .wouldBlock: "the peer is not reading (its buffer is full; nothing sent)"
        case .tooLarge(let size): "a frame of \(size) bytes exceeds the \(FrameChannel.maxBody)-byte limit (nothing sent)"
        case .broken(let detail): detail
        }
    }
}

/// One frame as read: valid until the reader's next read.
package struct Frame {
    package var kind: FrameKind
    package var flags: UInt8
    package var id: UInt64
    package var body: UnsafeRawBufferPointer

    package func int32(at offset: Int) -> Int32 {
        guard offset + 4 <= body.count else { return 0 }
        return Int32(bitPattern: body.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
    }

    package func uint64(at offset: Int) -> UInt64 {
        guard offset + 8 <= body.count else { return 0 }
        return body.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    /// The body from `offset` on.
    package func rest(from offset: Int) -> UnsafeRawBufferPointer {
        guard offset < body.count else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: body[offset...])
    }

    /// The body, a whole JSON document of `type` (a handshake's).
    package func json<T: JSONPayload>(_ type: T.Type) throws(JSONParseError) -> T {
        try T(jsonBytes: body)
    }
}

/// Writes frames to a stream socket (any thread; one frame at a time) and
/// reads them (one reader thread only). It owns the descriptor: closed when
/// the channel is freed, never earlier, so a late writer can never reach a
/// reused descriptor number.
///
/// A frame is sent whole or, as far as the peer can tell, not at all: after
/// any failure once part of a frame has left, the channel is dead (shut down
/// for writing), so the peer sees its stream end inside that frame and acts on
/// nothing, and every later send fails at once.
package final class FrameChannel: @unchecked Sendable {
    package static let headerSize = 16
    /// The largest body either side accepts: a bigger one breaks the stream.
    package static let maxBody = 16 << 20

    package let fd: Int32
    /// Host side: never wait for a peer that is not reading (see ``send``).
    private let nonBlocking: Bool
    /// How long a frame already begun may wait for the peer to read (non-blocking mode).
    private static let finishTimeoutMilliseconds: Int32 = 2_000
    /// Reader side: how to wait a moment for the next bytes before blocking
    /// in `read` (the runner's reader); nil blocks at once (the host's).
    private let spin: AdaptiveSpin?
    private let writing = Mutex(false)
    // Reader state: touched only by the reader thread.
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0
    private var consumed = 0

    /// - Parameters:
    ///   - nonBlocking: a send whose first byte cannot leave at once
    ///     fails with `.wouldBlock` (nothing sent) instead of waiting.
    ///   - spin: a read with nothing to read spins for its bytes (non-blocking
    ///     reads, yielding the CPU) before it blocks: see ``AdaptiveSpin``.
    package init(fd: Int32, nonBlocking: Bool = false, spin: AdaptiveSpin? = nil) {
        self.fd = fd
        self.nonBlocking = nonBlocking
        self.spin = spin
        capacity = 64 << 10
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
        close(fd)
    }

    /// Whether a send failed part-way (or ``kill()`` was called): no frame can be sent any more.
    package var isDead: Bool { writing.withLock { $0 } }

    /// Ends the sending side: the peer sees end of file after the last whole frame.
    package func kill() {
        writing.withLock { dead in
            if !dead { shutdown(fd, Int32(SHUT_WR)) }
            dead = true
        }
    }

    // MARK: Writing

    /// Sends one frame. `.wouldBlock` and `.tooLarge` mean none of it was
    /// sent and the channel is fine; after `.broken` the channel is dead.
    package func send(_ kind: FrameKind, id: UInt64, flags: UInt8 = 0, prefix: FramePrefix = FramePrefix(),
                      body: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) throws(FrameError) {
        let bodyLength = prefix.count + body.count
        guard bodyLength <= Self.maxBody else { throw .tooLarge(bodyLength) }
        var head: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let headCount = Self.headerSize + prefix.count
        withUnsafeMutableBytes(of: &head) { raw in
            raw.storeBytes(of: UInt32(bodyLength).littleEndian, toByteOffset: 0, as: UInt32.self)
            raw[4] = kind.rawValue
            raw[5] = flags
            raw.storeBytes(of: id.littleEndian, toByteOffset: 8, as: UInt64.self)
            withUnsafeBytes(of: prefix.words) { words in
                for i in 0..<prefix.count { raw[16 + i] = words[i] }
            }
        }
        try writing.withLock { (dead) throws(FrameError) in
            guard !dead else { throw .broken("the channel is closed") }
            do throws(FrameError) {
                try withUnsafeMutableBytes(of: &head) { (headBytes) throws(FrameError) in
                    try writeAll(headBytes.baseAddress!, headCount, body)
                }
            } catch {
                if error != .wouldBlock {
                    dead = true
                    shutdown(fd, Int32(SHUT_WR))
                }
                throw error
            }
        }
    }

    /// Sends a frame whose body is a JSON document (a handshake's).
    package func send(_ kind: FrameKind, id: UInt64 = 0, json document: some JSONPayload) throws(FrameError) {
        let body = document.jsonBytes()
        var failure: FrameError?
        body.withUnsafeBytes { bytes in
            do throws(FrameError) { try send(kind, id: id, body: bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func writeAll(_ head: UnsafeMutableRawPointer, _ headCount: Int, _ body: UnsafeRawBufferPointer) throws(FrameError) {
        let total = headCount + body.count
        var sent = 0
        /// When a frame begun must be done (one bound for the whole frame, set at its first wait).
        var deadline: UInt64?
        while sent < total {
            var vectors = (iovec(), iovec())
            var count: Int32 = 0
            if sent < headCount {
                vectors.0 = iovec(iov_base: head + sent, iov_len: headCount - sent)
                vectors.1 = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
                count = body.count > 0 ? 2 : 1
            } else {
                vectors.0 = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + (sent - headCount)), iov_len: total - sent)
                count = 1
            }
            let n = withUnsafeMutablePointer(to: &vectors) { pointer -> Int in
                pointer.withMemoryRebound(to: iovec.self, capacity: 2) { iov in
                    var message = msghdr()
                    message.msg_iov = iov
                    message.msg_iovlen = Int(count)
                    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL) | (nonBlocking ? Int32(MSG_DONTWAIT) : 0))
                }
            }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    if sent == 0 { throw .wouldBlock }
                    // Begun: finish it within one bound for the whole frame, or give the stream up.
                    let now = Self.monotonicMilliseconds()
                    let end = deadline ?? (now + UInt64(Self.finishTimeoutMilliseconds))
                    deadline = end
                    guard now < end else { throw .broken("the peer stopped reading in the middle of a frame") }
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, Int32(end - now))
                    continue
                }
                throw .broken("send failed: \(String(cString: strerror(code)))")
            }
            sent += n
        }
    }

    private static func monotonicMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000 + UInt64(time.tv_nsec) / 1_000_000
    }

    // MARK: Reading

    /// The next frame, or nil at end of stream between frames. The frame's
    /// body is valid until the next call. Only one thread may read.
    package func next() throws(FrameError) -> Frame? {
        start += consumed
        consumed = 0
        guard try fill(Self.headerSize) else { return nil }
        let head = UnsafeRawPointer(buffer + start)
        let length = Int(head.loadUnaligned(as: UInt32.self).littleEndian)
        guard length <= Self.maxBody else { throw .broken("a frame of \(length) bytes exceeds the \(Self.maxBody)-byte limit") }
        guard let kind = FrameKind(rawValue: head.load(fromByteOffset: 4, as: UInt8.self)) else {
            throw .broken("unknown frame kind 0x\(String(head.load(fromByteOffset: 4, as: UInt8.self), radix: 16))")
        }
        let flags = head.load(fromByteOffset: 5, as: UInt8.self)
        let id = head.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        guard try fill(Self.headerSize + length) else { throw .broken("the stream ended inside a \(kind) frame") }
        consumed = Self.headerSize + length
        let base = UnsafeRawPointer(buffer + start)
        return Frame(kind: kind, flags: flags, id: id, body: UnsafeRawBufferPointer(start: base + Self.headerSize, count: length))
    }

    /// Makes `count` bytes available from `start`; false at end of stream
    /// before any of them (a partial frame is `.broken`).
    private func fill(_ count: Int) throws(FrameError) -> Bool {
        if end - start >= count { return true }
        if start > 0 {
            if end > start { memmove(buffer, buffer + start, end - start) }
            end -= start
            start = 0
        }
        if count > capacity {
            var grown = capacity
            while grown < count { grown *= 2 }
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            bigger.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = bigger
            capacity = grown
        }
        while end < count {
            var n = 0
            var code: Int32 = 0
            // Bytes that come within the spin are read by a thread that never
            // slept: no wake-up, the most expensive part of a hop.
            let spun = spin?.spin(until: {
                n = recv(fd, buffer + end, capacity - end, Int32(MSG_DONTWAIT))
                code = n < 0 ? errno : 0
                return n >= 0 || (code != EAGAIN && code != EWOULDBLOCK && code != EINTR)
            }) ?? false
            if !spun {
                n = read(fd, buffer + end, capacity - end)
                code = n < 0 ? errno : 0
            }
            if n < 0 {
                if code == EINTR { continue }
                throw .broken("read failed: \(String(cString: strerror(code)))")
            }
            if n == 0 {
                if end == 0 { return false }
                throw .broken("the stream ended inside a frame")
            }
            end += n
        }
        return true
    }
}
