import Foundation
import Hummingbird
import NIOCore

/// A merchant's own page, served on loopback (GET `/shop`) for a browser
/// test: what a merchant writes around a provider's widget script. A page
/// on loopback rather than a `data:` URL, since Chromium refuses a page of
/// no address fetching a script from a private one (Private Network Access).
final class MerchantPageServer: Sendable {
    /// `http://127.0.0.1:PORT/shop`.
    let url: String
    private let server: Task<Void, any Error>

    private init(url: String, server: Task<Void, any Error>) {
        self.url = url
        self.server = server
    }

    static func start(_ html: String) async throws -> MerchantPageServer {
        let router = Router()
        router.get("shop") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        }
        let (port, server) = try await SimulatorServer.runUntilListening("the merchant page") { onRunning in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) })
        }
        return MerchantPageServer(url: "http://127.0.0.1:\(port)/shop", server: server)
    }

    func stop() async {
        server.cancel()
        _ = await server.result
    }
}
