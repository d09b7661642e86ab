import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import TestSupport

/// A merchant's endpoint on a loopback port that misbehaves on request: it
/// answers each delivery as its script says (a status, at once or late; no
/// answer at all; the connection closed), and records every request it got,
/// in order, with what it did.
final class ScriptedReceiver: Sendable {
    enum Behaviour: Sendable, Equatable {
        case answer(Int)
        /// Answers `status` only after `delay` (after the sender gave up, when longer than its timeout).
        case late(Int, Duration)
        /// Never answers; the connection stays open until the sender closes it.
        case hang
        /// Closes the connection without answering.
        case close
        /// Answers `status` once the test calls ``release()``.
        case held(Int)
    }

    struct Received: Sendable {
        var headers: [String: String]
        var body: Data
        var behaviour: Behaviour
        var webhookID: String { headers["webhook-id"] ?? "" }
        /// Whether the receiver answered it 2xx in time (as its script meant).
        var acknowledged: Bool {
            switch behaviour {
            case .answer(let status), .held(let status): (200..<300).contains(status)
            default: false
            }
        }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var sessionID: String { json["sessionId"] as? String ?? "" }
        var sequence: Int { json["sequence"] as? Int ?? 0 }
    }

    typealias Script = @Sendable (_ index: Int, _ request: Received) -> Behaviour
    private let script: Shared<Script>
    private let log = Shared<[Received]>([])
    /// The answers of requests held (``Behaviour/held(_:)``), until released.
    private let held = Shared<[@Sendable () -> Void]>([])
    private let channel: Channel
    let port: Int

    /// Listens on 127.0.0.1 (at `port`, or any free one); `script` gets each
    /// request's index (0, 1, ...) and the request.
    init(port: Int = 0, script: @escaping @Sendable (_ index: Int, _ request: Received) -> Behaviour = { _, _ in .answer(204) }) async throws {
        let box = Shared<Script>(script)
        self.script = box
        let log = self.log
        let held = self.held
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(hold: { answer in held.withLock { $0.append(answer) } }, decide: { request in
                        let behaviour = log.withLock { log -> Behaviour in
                            let chosen = box.withLock { $0 }(log.count, request)
                            var recorded = request
                            recorded.behaviour = chosen
                            log.append(recorded)
                            return chosen
                        }
                        return behaviour
                    }))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        self.port = channel.localAddress?.port ?? 0
    }

    /// Replaces the script (for the requests from now on).
    func setScript(_ script: @escaping @Sendable (_ index: Int, _ request: Received) -> Behaviour) {
        self.script.withLock { $0 = script }
    }

    /// Answers every request held so far.
    func release() {
        for answer in held.withLock({ held in defer { held.removeAll() }; return held }) { answer() }
    }

    var received: [Received] { log.withLock { $0 } }
    var url: String { "http://127.0.0.1:\(port)/hooks" }

    func close() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let hold: @Sendable (@escaping @Sendable () -> Void) -> Void
        let decide: @Sendable (Received) -> Behaviour
        var headers: [String: String] = [:]
        var body = Data()

        init(hold: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, decide: @escaping @Sendable (Received) -> Behaviour) {
            self.hold = hold
            self.decide = decide
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                headers = [:]
                body = Data()
                for field in head.headers { headers[field.name.lowercased()] = field.value }
            case .body(var buffer):
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end:
                let behaviour = decide(Received(headers: headers, body: body, behaviour: .hang))
                switch behaviour {
                case .answer(let status):
                    respond(context, status)
                case .late(let status, let delay):
                    let loop = context.eventLoop
                    let bound = NIOLoopBound(context, eventLoop: loop)
                    loop.scheduleTask(in: .nanoseconds(Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)) {
                        if bound.value.channel.isActive { self.respond(bound.value, status) }
                    }
                case .held(let status):
                    let loop = context.eventLoop
                    let bound = NIOLoopBound(context, eventLoop: loop)
                    hold { loop.execute { if bound.value.channel.isActive { self.respond(bound.value, status) } } }
                case .hang:
                    break
                case .close:
                    context.close(promise: nil)
                }
            }
        }

        private func respond(_ context: ChannelHandlerContext, _ status: Int) {
            var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
            head.headers.add(name: "content-length", value: "0")
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
