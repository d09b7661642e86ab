import CheckoutEngine
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request that the HTTP/1.1 parser refuses (a malformed request
/// line or header, headers over the limits) with a `400` problem, as every
/// other error is answered, then closes the connection.
///
/// Hummingbird catches the parser's error in its connection loop and writes
/// a bodiless `400` there, with no hook; this handler sits between the HTTP
/// codec and that loop (``HTTP1Channel/Configuration/additionalChannelHandlers``)
/// and takes the error before the loop sees it, when the error falls between
/// requests: it answers once every request read before it has been answered
/// (pipelined requests keep their order). An error in the middle of a
/// request (its head read, its end not) goes on to Hummingbird, which must
/// end that exchange itself.
final class ParseErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var requestsStarted = 0
    private var requestsEnded = 0
    private var responsesEnded = 0
    /// The refusal to send once the requests before it are answered.
    private var pending: Problem?
    private var refused = false
    /// How long a refused connection waits for the client to close its side.
    static let lingering: TimeAmount = .seconds(2)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: requestsStarted += 1
        case .end: requestsEnded += 1
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        responsesEnded += 1
        context.write(data, promise: promise)
        if let problem = pending, responsesEnded == requestsStarted {
            pending = nil
            refuse(problem, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, requestsStarted == requestsEnded else {
            context.fireErrorCaught(error)
            return
        }
        guard !refused, pending == nil else { return }
        let problem = ProblemCatalog.problem(code: .malformedRequest, detail: "the request is not valid HTTP/1.1 (\(error)); the connection is closed")
        if responsesEnded == requestsStarted {
            refuse(problem, context: context)
        } else {
            pending = problem
        }
    }

    private func refuse(_ problem: Problem, context: ChannelHandlerContext) {
        refused = true
        let body = ByteBuffer(bytes: problem.jsonBytes())
        var fields = HTTPFields()
        fields[.contentType] = "application/problem+json"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .badRequest, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        // A lingering close: end the output (the client reads the answer,
        // then end of file) and close once the client has closed its side,
        // or after a grace. Closing at once with the client's bytes unread
        // would reset the connection, and a reset discards the answer the
        // client has not read yet.
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            let halfClosed = context.eventLoop.makePromise(of: Void.self)
            halfClosed.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
            context.close(mode: .output, promise: halfClosed)
            context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingering) { context.close(promise: nil) }
        }
    }
}
