import Foundation
import ProviderSandbox

/// The Tabby simulator alone on a loopback port, with a client that speaks
/// its wire format (JSON bodies, the sandbox secret key) and follows no redirect.
final class TabbySimulatorFixture: Sendable {
    private let server: SimulatorServer
    /// `http://127.0.0.1:PORT/tabby`.
    let base: String

    struct Answer {
        var status: Int
        var location: String?
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        /// The payment object: the answer itself, or a checkout's `payment`.
        var payment: [String: Any] { json["payment"] as? [String: Any] ?? json }
    }

    private init(server: SimulatorServer) {
        self.server = server
        base = server.root + "/tabby"
    }

    static func start() async throws -> TabbySimulatorFixture {
        TabbySimulatorFixture(server: try await SimulatorServer.start([TabbySimulator()], label: "tabby-simulator-tests"))
    }

    var sandbox: ProviderSandbox { server.sandbox }
    var tabby: TabbySimulator { sandbox.simulators[0] as! TabbySimulator }

    func stop() async { await server.stop() }

    /// `method base+path` with `json` as the body; the sandbox key unless `key` says otherwise.
    func request(_ method: String, _ path: String, json: [String: Any]? = nil, raw: String? = nil,
                 key: String? = TabbySimulator.secretKey) async throws -> Answer {
        let body = raw ?? json.map { String(decoding: try! JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let reply = try await server.send(method, path.hasPrefix("http") ? path : base + path, headers: SimulatorServer.bearer(key),
                                          body: body.map { (contentType: "application/json", text: $0) })
        return Answer(status: reply.status, location: reply.location, text: reply.text)
    }

    /// A checkout session body.
    static func session(amount: String = "100.00", currency: String = "SAR", email: String = "otp.success@tabby.ai",
                        phone: String = "+966500000001") -> [String: Any] {
        [
            "payment": [
                "amount": amount, "currency": currency, "description": "Order 1001",
                "buyer": ["name": "Sara Al-Harbi", "email": email, "phone": phone],
                "shipping_address": ["city": "Riyadh", "address": "King Fahd Road 1", "zip": "12211"],
                "order": ["reference_id": "att_1", "items": [["title": "Order 1001", "quantity": 1, "unit_price": amount, "category": "General"]]],
            ],
            "lang": "en", "merchant_code": "sandbox_sa",
            "merchant_urls": ["success": "https://shop.example/ok", "cancel": "https://shop.example/cancel", "failure": "https://shop.example/fail"],
        ]
    }

    /// Creates a session on `region`'s host; the answer.
    func checkout(_ region: String = "sa", _ body: [String: Any] = TabbySimulatorFixture.session()) async throws -> Answer {
        try await request("POST", "/\(region)/api/v2/checkout", json: body)
    }

    /// A created session's payment id and `web_url`.
    func created(_ region: String = "sa", _ body: [String: Any] = TabbySimulatorFixture.session()) async throws -> (id: String, url: String) {
        let answer = try await checkout(region, body)
        let configuration = answer.json["configuration"] as? [String: Any]
        let products = configuration?["available_products"] as? [String: Any]
        guard answer.status == 200, let id = answer.payment["id"] as? String,
              let url = (products?["installments"] as? [[String: Any]])?.first?["web_url"] as? String else {
            throw SandboxGatewayError(message: "checkout failed: \(answer.status) \(answer.text)")
        }
        return (id, url)
    }
}
