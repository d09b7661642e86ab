import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ProviderSandbox

/// The HyperPay simulator alone on a loopback port, with a client that speaks
/// its wire format (form bodies, the sandbox Bearer token) and follows no redirect.
final class HyperPaySimulatorFixture: Sendable {
    let sandbox: ProviderSandbox
    let base: String
    private let server: Task<Void, any Error>
    private let client: HTTPClient

    struct Answer {
        var status: Int
        var location: String?
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        var code: String? { (json["result"] as? [String: Any])?["code"] as? String }
    }

    private init(sandbox: ProviderSandbox, base: String, server: Task<Void, any Error>) {
        self.sandbox = sandbox
        self.base = base
        self.server = server
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
    }

    static func start() async throws -> HyperPaySimulatorFixture {
        var logger = Logger(label: "hyperpay-simulator-tests")
        logger.logLevel = .critical
        let sandbox = ProviderSandbox(simulators: [HyperPaySimulator()], logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = sandbox.application(port: 0) { continuation.yield($0) }
        let server = Task { try await application.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw SandboxGatewayError(message: "the simulator did not start") }
        return HyperPaySimulatorFixture(sandbox: sandbox, base: "http://127.0.0.1:\(port)/hyperpay", server: server)
    }

    var hyperpay: HyperPaySimulator { sandbox.simulators[0] as! HyperPaySimulator }

    func stop() async {
        server.cancel()
        _ = try? await server.value
        try? await client.shutdown()
    }

    /// `method base+path` with `form` as the body; the sandbox token unless `token` says otherwise.
    func request(_ method: String, _ path: String, form: [(String, String)]? = nil,
                 token: String? = HyperPaySimulator.accessToken) async throws -> Answer {
        var request = HTTPClientRequest(url: path.hasPrefix("http") ? path : base + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let encoded = form.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
            request.body = .bytes(ByteBuffer(string: encoded))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), location: response.headers.first(name: "location"), text: String(buffer: body))
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Prepares a checkout; its id.
    func prepare(amount: String = "92.00", currency: String = "SAR", type: String = "DB",
                 entity: String = HyperPaySimulator.entityId, reference: String = "att_1",
                 back: String? = "https://shop.example/back") async throws -> String {
        var form = [("entityId", entity), ("amount", amount), ("currency", currency), ("paymentType", type), ("merchantTransactionId", reference)]
        if let back { form.append(("shopperResultUrl", back)) }
        let answer = try await request("POST", "/v1/checkouts", form: form)
        guard answer.status == 200, let id = answer.json["id"] as? String else {
            throw SandboxGatewayError(message: "prepare failed: \(answer.status) \(answer.text)")
        }
        return id
    }

    /// The checkout's payment, as the status query answers it.
    func status(_ checkoutId: String, entity: String = HyperPaySimulator.entityId) async throws -> Answer {
        try await request("GET", "/v1/checkouts/\(checkoutId)/payment?entityId=\(entity)")
    }
}
