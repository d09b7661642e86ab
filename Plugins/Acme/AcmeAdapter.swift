import Foundation
import GatewayAdapterSDK

/// A minimal adapter for Acme, a hypothetical PSP: card `authorize` and `verify` over HTTPS.
final class AcmeAdapter: PaymentAdapter {
    static let id = "acme"            // = the manifest's "id"
    static let version = "1.0.0"      // = the manifest's "version"

    let host: AdapterHost
    let client: ProviderHTTPClient

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        // config.base_url (required) and config.request_timeout_ms (100...120000, default 10000);
        // every request carries "Authorization: Bearer <api_key>", read for it and wiped after.
        var client = try ProviderHTTPClient(host: host, provider: "Acme", configuration: configuration,
                                            example: "https://api.acme.example", authorization: .bearer(secret: "api_key"))
        client.jsonKeys = .snakeCase      // Acme's members are snake_case: decline_code
        self.client = client
        // Without its API key nothing can be paid: refuse to start, so the operator (and plugin
        // check's `load` step) is told why, rather than fail every call.
        guard host.hasSecret("api_key") else {
            throw AdapterError.invalidConfiguration("the api_key secret is missing or empty: set ACME_API_KEY (the manifest's secrets.api_key)")
        }
    }

    var description: AdapterDescription {
        AdapterDescription(id: Self.id, version: Self.version, methods: ["visa", "mada"],
                           operations: [.authorize, .verify], currencies: ["SAR"])
    }

    // MARK: Operations (the SDK's default handle(_:) calls them)

    private struct ChargeRequest: Encodable, Sendable {
        var amount: Int64
        var currency: String
        var token: String
        var reference: String
        var capture: Bool
    }

    /// Acme's charge object (hypothetical).
    private struct Charge: Decodable {
        var id: String
        var state: String          // "captured", "authorized", "declined", "pending"
        var declineCode: String?   // decline_code on the wire
    }

    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        // Checked before anything is sent: these complete with GW_E_INVALID_REQUEST.
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        guard request.amount.currency == "SAR" else { throw AdapterError.invalidRequest("Acme takes SAR only") }
        guard let token = request.instrument?["token"]?.stringValue, !token.isEmpty else {
            throw AdapterError.invalidRequest("instrument.token is required")
        }
        let charge = ChargeRequest(amount: request.amount.value, currency: request.amount.currency, token: token,
                                   reference: request.paymentId, capture: request.capture == .automatic)
        let response = try await client.send("POST", "/v1/charges", .json(charge),
                                             headers: ["Idempotency-Key": request.idempotencyKey])
        if response.status == 503 {
            // Acme documents 503 as "refused before processing": provably not charged.
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .providerError, message: "Acme refused the charge before processing (HTTP 503)",
                retryable: true, safeToRetryElsewhere: true, providerCode: "503"))
        }
        if response.status == 409, response.json["error"]?.stringValue == "idempotency_key_reused" {
            // Acme documents it: the key was used before with another request, and nothing was done.
            // The header's one exception: GW_E_INVALID_REQUEST although the request was sent.
            throw AdapterError.idempotencyConflict("Acme refused the Idempotency-Key: used before with another request")
        }
        let result = try interpret(response, amount: request.amount)
        host.log(.info, "authorize \(request.paymentId): \(result.status.rawValue)")
        return result
    }

    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        let response: ProviderResponse
        if let reference = request.providerReference {
            response = try await client.send("GET", "/v1/charges/" + ProviderHTTPClient.pathSegment(reference))
        } else {
            // An authorize whose answer was lost: found by the reference it sent.
            response = try await client.send("GET", "/v1/charges", .form([("reference", request.paymentId)]))
        }
        if response.status == 404 {
            return AdapterResult(status: .failed, problem: AdapterProblem(
                code: .unknownPayment, message: "Acme has no such charge", retryable: false))
        }
        return try interpret(response, amount: nil)
    }

    // MARK: Helpers

    /// Maps Acme's answer to a result. Anything we cannot interpret after the
    /// request was sent is an unknown outcome, never a failure.
    private func interpret(_ response: ProviderResponse, amount: Money?) throws -> AdapterResult {
        switch response.status {
        case 200, 201:
            guard let charge = response.decode(Charge.self) else {
                throw AdapterError.outcomeUnknown("unreadable Acme charge (HTTP \(response.status))")
            }
            switch charge.state {
            case "captured":
                return AdapterResult(status: .succeeded, providerReference: charge.id, amount: amount, providerStatus: charge.state)
            case "authorized":
                return AdapterResult(status: .authorized, providerReference: charge.id, amount: amount, providerStatus: charge.state)
            case "declined":
                return AdapterResult(
                    status: .failed, providerReference: charge.id,
                    problem: AdapterProblem(code: .cardDeclined, message: "Acme declined the charge",
                                            retryable: false, providerCode: charge.declineCode),
                    providerStatus: charge.state)
            default:
                return AdapterResult(status: .pending, providerReference: charge.id, amount: amount, providerStatus: charge.state)
            }
        default:
            throw AdapterError.outcomeUnknown("unexpected HTTP \(response.status) from Acme")
        }
    }
}
