import Foundation
import Hummingbird
import NIOCore

/// `/_sandbox`: faults and charge counts, for tests and demos over HTTP.
struct SandboxControl: Sendable {
    let sandbox: ProviderSandbox

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let sandbox = self.sandbox
        routes.post("faults") { request, context -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            do {
                let rule = try Self.rule(from: Data(buffer: body), known: Set(sandbox.simulators.map(\.id)))
                sandbox.faults.add(rule)
                return Self.json(.created, ["rules": sandbox.faults.rules.count])
            } catch let error as FaultRuleError {
                return Self.json(.badRequest, ["error": error.message])
            }
        }
        routes.delete("faults") { _, _ -> Response in
            sandbox.faults.removeAll()
            return Response(status: .noContent)
        }
        routes.get("stats") { _, _ -> Response in
            let counts = sandbox.simulators.map { ($0.id, ["charges": $0.charges]) }
            return Self.json(.ok, Dictionary(counts, uniquingKeysWith: { first, _ in first }))
        }
    }

    struct FaultRuleError: Error { let message: String }

    static func rule(from data: Data, known: Set<String>) throws -> FaultPlan.Rule {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FaultRuleError(message: "the body must be a JSON object")
        }
        let provider = object["provider"] as? String
        if let provider, !known.contains(provider) {
            throw FaultRuleError(message: "provider \(provider) is not simulated here (known: \(known.sorted().joined(separator: ", ")))")
        }
        let fault: FaultPlan.Fault
        switch object["fault"] as? String {
        case "latency":
            guard let ms = object["milliseconds"] as? Int, ms >= 0 else { throw FaultRuleError(message: "a latency fault needs milliseconds (an integer ≥ 0)") }
            fault = .latency(milliseconds: ms)
        case "status":
            guard let status = object["status"] as? Int, (400...599).contains(status) else { throw FaultRuleError(message: "a status fault needs status, 400 to 599") }
            fault = .status(status)
        case "drop":
            fault = .drop
        default:
            throw FaultRuleError(message: "fault must be latency, status or drop")
        }
        let count = object["count"] as? Int ?? 1
        guard count >= 1 else { throw FaultRuleError(message: "count must be at least 1") }
        return FaultPlan.Rule(provider: provider, path: object["path"] as? String, method: object["method"] as? String, fault: fault, count: count)
    }

    static func json(_ status: HTTPResponse.Status, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, SimulatorJSON.text(document))
    }
}
