import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ProviderSandbox

/// The Tamara simulator alone on a loopback port, with a client that speaks
/// its wire format (JSON, the sandbox Bearer token) and follows no redirect.
final class TamaraSimulatorFixture: Sendable {
    let sandbox: ProviderSandbox
    let base: String
    private let server: Task<Void, any Error>
    private let client: HTTPClient

    struct Answer {
        var status: Int
        var location: String?
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        var errorCode: String? { ((json["errors"] as? [[String: Any]])?.first)?["error_code"] as? String }
        subscript(key: String) -> String? { json[key] as? String }
    }

    private init(sandbox: ProviderSandbox, base: String, server: Task<Void, any Error>) {
        self.sandbox = sandbox
        self.base = base
        self.server = server
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
    }

    static func start() async throws -> TamaraSimulatorFixture {
        var logger = Logger(label: "tamara-simulator-tests")
        logger.logLevel = .critical
        let sandbox = ProviderSandbox(simulators: [TamaraSimulator()], logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = sandbox.application(port: 0) { continuation.yield($0) }
        let server = Task { try await application.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw SandboxGatewayError(message: "the simulator did not start") }
        return TamaraSimulatorFixture(sandbox: sandbox, base: "http://127.0.0.1:\(port)/tamara", server: server)
    }

    var tamara: TamaraSimulator { sandbox.simulators[0] as! TamaraSimulator }

    func stop() async {
        server.cancel()
        _ = try? await server.value
        try? await client.shutdown()
    }

    /// `method base+path` with `json` (raw text) as the body; the sandbox token unless told otherwise.
    func request(_ method: String, _ path: String, json: String? = nil, token: String? = TamaraSimulator.apiToken) async throws -> Answer {
        var request = HTTPClientRequest(url: path.hasPrefix("http") ? path : base + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), location: response.headers.first(name: "location"), text: String(buffer: body))
    }

    /// A checkout body as Tamara documents it; `amount` is the JSON number text.
    static func checkout(amount: String = "300", currency: String = "SAR", country: String = "SA", reference: String = "ref-1") -> String {
        """
        {"order_reference_id":"\(reference)","order_number":"A123","description":"Lego City 8601",
         "total_amount":{"amount":\(amount),"currency":"\(currency)"},
         "shipping_amount":{"amount":0,"currency":"\(currency)"},"tax_amount":{"amount":0,"currency":"\(currency)"},
         "country_code":"\(country)","payment_type":"PAY_BY_INSTALMENTS","instalments":3,
         "items":[{"reference_id":"123","type":"Physical","name":"Lego City 8601","sku":"SA-12436","quantity":1,
                   "total_amount":{"amount":\(amount),"currency":"\(currency)"}}],
         "consumer":{"first_name":"Mona","last_name":"Lisa","phone_number":"566027755","email":"mona@example.com"},
         "shipping_address":{"first_name":"Mona","last_name":"Lisa","line1":"3764 Al Urubah Rd","city":"Riyadh","country_code":"\(country)"},
         "merchant_url":{"success":"https://shop.example/ok","failure":"https://shop.example/failed",
                         "cancel":"https://shop.example/cancelled","notification":"https://shop.example/notify"},
         "additional_data":{"capture":"manual"}}
        """
    }

    /// Creates a checkout; the answer.
    func create(amount: String = "300", currency: String = "SAR", country: String = "SA") async throws -> Answer {
        let answer = try await request("POST", "/checkout", json: Self.checkout(amount: amount, currency: currency, country: country))
        guard answer.status == 200, answer["order_id"] != nil else { throw SandboxGatewayError(message: "checkout failed: \(answer.status) \(answer.text)") }
        return answer
    }

    /// The payer's step on the approval page.
    func payer(_ checkoutURL: String, _ outcome: String) async throws -> Answer {
        try await request("GET", checkoutURL + "?sandbox_outcome=" + outcome, token: nil)
    }
}
