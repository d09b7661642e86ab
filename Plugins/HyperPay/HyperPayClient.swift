import Foundation
import GatewayAdapterSDK

/// One OPPWA answer: the HTTP status, the `result` and the rest of the JSON.
struct HyperPayAnswer: Sendable {
    var status: Int
    var body: JSONValue

    init(status: Int, body: JSONValue) {
        self.status = status
        self.body = body
    }

    init(_ response: ProviderResponse) {
        self.init(status: response.status, body: response.json)
    }
    var code: String? { body["result"]?["code"]?.stringValue }
    var resultDescription: String { body["result"]?["description"]?.stringValue ?? "" }
    subscript(key: String) -> String? { body[key]?.stringValue }

    /// `name: message` of each `result.parameterErrors` entry.
    var parameterErrors: String {
        guard case .array(let errors)? = body["result"]?["parameterErrors"] else { return "" }
        return errors.compactMap { error in
            error["name"]?.stringValue.map { "\($0): \(error["message"]?.stringValue ?? "invalid")" }
        }.joined(separator: "; ")
    }

    /// The code, description and parameter errors, for messages.
    var summary: String {
        let errors = parameterErrors
        return "\(code ?? "HTTP \(status)") \(resultDescription)" + (errors.isEmpty ? "" : " (\(errors))")
    }
}
