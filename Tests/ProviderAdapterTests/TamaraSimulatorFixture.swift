import Foundation
import ProviderSandbox

/// The Tamara simulator alone on a loopback port, with a client that speaks
/// its wire format (JSON, the sandbox Bearer token) and follows no redirect.
final class TamaraSimulatorFixture: Sendable {
    private let server: SimulatorServer
    let base: String

    struct Answer {
        var status: Int
        var location: String?
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        var errorCode: String? { ((json["errors"] as? [[String: Any]])?.first)?["error_code"] as? String }
        subscript(key: String) -> String? { json[key] as? String }
    }

    private init(server: SimulatorServer) {
        self.server = server
        base = server.root + "/tamara"
    }

    static func start() async throws -> TamaraSimulatorFixture {
        TamaraSimulatorFixture(server: try await SimulatorServer.start([TamaraSimulator()], label: "tamara-simulator-tests"))
    }

    var sandbox: ProviderSandbox { server.sandbox }
    var tamara: TamaraSimulator { sandbox.simulators[0] as! TamaraSimulator }

    func stop() async { await server.stop() }

    /// `method base+path` with `json` (raw text) as the body; the sandbox token unless told otherwise.
    func request(_ method: String, _ path: String, json: String? = nil, token: String? = TamaraSimulator.apiToken) async throws -> Answer {
        let reply = try await server.send(method, path.hasPrefix("http") ? path : base + path, headers: SimulatorServer.bearer(token),
                                          body: json.map { (contentType: "application/json", text: $0) })
        return Answer(status: reply.status, location: reply.location, text: reply.text)
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
