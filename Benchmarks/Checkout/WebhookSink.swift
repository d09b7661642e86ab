import Foundation
import GatewayPayloads
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A merchant's endpoint at its fastest, for `--compare-webhooks`: answers
/// every delivery 204 at once, and notes when each arrived against the time
/// its event was committed (the body's `at`), and each `webhook-id` seen.
final class WebhookSink: Sendable {
    private struct Log {
        var lags: [Double] = []
        var ids: Set<String> = []
        var repeats = 0
        var first: Double?
        var last: Double?
    }

    private final class Box: Sendable {
        let log = Mutex(Log())
    }

    private let box = Box()
    private let channel: any Channel
    let url: String

    init() async throws {
        let box = self.box
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler { id, body in
                        let now = Date().timeIntervalSince1970
                        // The event's `at` is the body's first one (the session's come after it).
                        var at: Double?
                        if let range = body.range(of: Data("\"at\":\"".utf8)) {
                            let start = range.upperBound
                            if let end = body[start...].firstIndex(of: UInt8(ascii: "\"")) {
                                at = WireDate.parse(String(decoding: body[start..<end], as: UTF8.self))?.timeIntervalSince1970
                            }
                        }
                        box.log.withLock { log in
                            if !log.ids.insert(id).inserted { log.repeats += 1 }
                            if let at { log.lags.append(max(0, now - at)) }
                            log.first = log.first ?? now
                            log.last = now
                        }
                    })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        url = "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/hooks"
    }

    /// How many distinct events arrived.
    var received: Int { box.log.withLock { $0.ids.count } }

    /// Deliveries per second from the first to the last, lag p50 and p99 (ms), repeats.
    func figures() -> (perSecond: Double, p50: Double, p99: Double, repeats: Int, count: Int) {
        box.log.withLock { log in
            let lags = log.lags.sorted()
            func p(_ q: Double) -> Double { lags.isEmpty ? 0 : lags[min(lags.count - 1, Int(Double(lags.count) * q))] * 1000 }
            let span = (log.last ?? 0) - (log.first ?? 0)
            return (span > 0 ? Double(lags.count) / span : 0, p(0.5), p(0.99), log.repeats, lags.count)
        }
    }

    func close() async { try? await channel.close() }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let arrived: @Sendable (String, Data) -> Void
        var id = ""
        var body = Data()

        init(arrived: @escaping @Sendable (String, Data) -> Void) { self.arrived = arrived }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                id = head.headers["webhook-id"].first ?? ""
                body = Data()
            case .body(var buffer):
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end:
                arrived(id, body)
                var head = HTTPResponseHead(version: .http1_1, status: .noContent)
                head.headers.add(name: "content-length", value: "0")
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
