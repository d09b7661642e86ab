import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Gathers one egress response for AsyncHTTPClient, and records whether the
/// request head was written: the line between "nothing sent" and "the
/// provider may have acted" when the exchange fails.
final class EgressResponseCollector: HTTPClientResponseDelegate, Sendable {
    typealias Response = EgressHTTPResponse

    /// The answer grew past ``limit`` bytes.
    struct TooLarge: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "the response body exceeds \(limit) bytes" }
    }

    private struct State {
        var sent = false
        var head: HTTPResponseHead?
        var body = ByteBuffer()
    }

    private let state = Mutex(State())
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Whether the request head has been written to the connection.
    var requestSent: Bool { state.withLock { $0.sent } }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        state.withLock { $0.sent = true }
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLock { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let fits = state.withLock { state -> Bool in
            guard state.body.readableBytes + buffer.readableBytes <= limit else { return false }
            var part = buffer
            state.body.writeBuffer(&part)
            return true
        }
        return fits ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(TooLarge(limit: limit))
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> EgressHTTPResponse {
        try state.withLock { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            var headers: [String: String] = [:]
            for (name, value) in head.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { "\($0), \(value)" } ?? value
            }
            return EgressHTTPResponse(status: Int(head.status.code), headers: headers, body: Data(state.body.readableBytesView))
        }
    }
}
