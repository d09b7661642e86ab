import Foundation

/// A one-connection-at-a-time HTTP/1.1 server on 127.0.0.1 and an ephemeral
/// port, for tests of the host's egress: answers every request with `body`,
/// and records the request lines it saw.
final class LoopbackHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let socket: Int32
    private let lock = NSLock()
    private var seen: [String] = []

    init(body: String) throws {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
        let listener = socket
        let response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Sim: yes\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 8192)
                let n = read(client, &buffer, buffer.count)
                if n > 0, let line = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\r\n").first {
                    self?.record(String(line))
                }
                // All of it, however many writes the socket takes.
                response.utf8CString.withUnsafeBytes { bytes in
                    var sent = 0
                    let total = bytes.count - 1
                    while sent < total {
                        let n = write(client, bytes.baseAddress! + sent, total - sent)
                        if n <= 0 { break }
                        sent += n
                    }
                }
                close(client)
            }
        }
    }

    private func record(_ line: String) { lock.withLock { seen.append(line) } }

    var requestLines: [String] { lock.withLock { seen } }

    deinit {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }
}
