import Foundation
import ProviderSandbox

/// The HyperPay simulator alone on a loopback port, with a client that speaks
/// its wire format (form bodies, the sandbox Bearer token) and follows no redirect.
final class HyperPaySimulatorFixture: Sendable {
    private let server: SimulatorServer
    let base: String

    struct Answer {
        var status: Int
        var location: String?
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        var code: String? { (json["result"] as? [String: Any])?["code"] as? String }
    }

    private init(server: SimulatorServer) {
        self.server = server
        base = server.root + "/hyperpay"
    }

    static func start() async throws -> HyperPaySimulatorFixture {
        HyperPaySimulatorFixture(server: try await SimulatorServer.start([HyperPaySimulator()], label: "hyperpay-simulator-tests"))
    }

    var sandbox: ProviderSandbox { server.sandbox }
    var hyperpay: HyperPaySimulator { sandbox.simulators[0] as! HyperPaySimulator }

    func stop() async { await server.stop() }

    /// `method base+path` with `form` as the body; the sandbox token unless `token` says otherwise.
    func request(_ method: String, _ path: String, form: [(String, String)]? = nil,
                 token: String? = HyperPaySimulator.accessToken) async throws -> Answer {
        let encoded = form.map { form in
            (contentType: "application/x-www-form-urlencoded", text: form.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&"))
        }
        let reply = try await server.send(method, path.hasPrefix("http") ? path : base + path, headers: SimulatorServer.bearer(token), body: encoded)
        return Answer(status: reply.status, location: reply.location, text: reply.text)
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Prepares a checkout; its id.
    func prepare(amount: String = "92.00", currency: String = "SAR", type: String = "DB",
                 entity: String = HyperPaySimulator.entityId, reference: String = "att_00000001",
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
