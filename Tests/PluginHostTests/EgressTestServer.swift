import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An HTTP/1.1 (or https) server on 127.0.0.1 and an ephemeral port, on NIO,
/// for egress tests: it records each request and answers as its ``Behavior`` says.
final class EgressTestServer: @unchecked Sendable {
    /// How the server answers.
    enum Behavior: Sendable {
        /// A complete response.
        case answer(status: Int, headers: [(String, String)], body: String)
        /// Reads the request and never answers.
        case hang
        /// Sends the head and part of the body it announced, then closes.
        case closeMidAnswer
        /// Holds every request until `count` are waiting, then answers them all with `body`.
        case holdUntil(count: Int, body: String)
    }

    /// One request as the server saw it.
    struct Seen: Sendable {
        var method: String
        var uri: String
        var headers: [(String, String)]
        var body: String
    }

    let behavior: Behavior
    private(set) var port = 0
    private var channel: Channel?
    private let lock = NSLock()
    private var seen: [Seen] = []
    private var children: [Channel] = []
    private var held: [NIOLoopBound<ChannelHandlerContext>] = []

    /// Starts listening on `group` (NIO's singleton by default); `tls` makes it an https server.
    init(_ behavior: Behavior, tls: TLSConfiguration? = nil,
         group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws {
        self.behavior = behavior
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] child in
                child.eventLoop.makeCompletedFuture {
                    self.lock.withLock { self.children.append(child) }
                    if let sslContext { try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try child.pipeline.syncOperations.configureHTTPServerPipeline()
                    try child.pipeline.syncOperations.addHandler(Handler(server: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    var requests: [Seen] { lock.withLock { seen } }

    /// Closes the listener and every connection.
    func stop() async {
        let open = lock.withLock { children }
        for child in open { try? await child.close() }
        try? await channel?.close()
    }

    fileprivate func received(_ request: Seen, _ context: ChannelHandlerContext, _ handler: Handler) {
        lock.withLock { seen.append(request) }
        switch behavior {
        case .answer(let status, let headers, let body):
            handler.respond(context, status: status, headers: headers, body: body)
        case .hang:
            break
        case .closeMidAnswer:
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "100")
            context.write(handler.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "0123456789")))), promise: nil)
            context.close(promise: nil)
        case .holdUntil(let count, let body):
            let release: [NIOLoopBound<ChannelHandlerContext>] = lock.withLock {
                held.append(NIOLoopBound(context, eventLoop: context.eventLoop))
                guard held.count >= count else { return [] }
                defer { held.removeAll() }
                return held
            }
            for waiting in release {
                waiting.eventLoop.execute {
                    handler.respond(waiting.value, status: 200, headers: [], body: body)
                }
            }
        }
    }

    /// The per-connection handler.
    fileprivate final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let server: EgressTestServer
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()

        init(server: EgressTestServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                guard let head else { return }
                let seen = Seen(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                                body: String(buffer: body))
                server.received(seen, context, self)
            }
        }

        func respond(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)], body: String) {
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "content-length", value: "\(body.utf8.count)")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            context.close(promise: nil)
        }
    }
}
