import Foundation
import GatewayAdapterSDK

/// One Tabby answer (snake_case JSON): the HTTP status and the body.
typealias TabbyAnswer = ProviderResponse

extension ProviderResponse {
    /// Tabby's error document, `{"status": "error", "errorType": …, "error": …}`.
    struct TabbyErrorDocument: Decodable {
        var errorType: String?
        var error: String?
    }

    /// `errorType` (bad_data, not_authorized, no_permission, not_found, conflict), if any.
    var errorType: String? {
        (try? JSONDecoder().decode(TabbyErrorDocument.self, from: body))?.errorType
    }

    /// `HTTP 400 bad_data: <error>`, for messages.
    var summary: String {
        let document = try? JSONDecoder().decode(TabbyErrorDocument.self, from: body)
        let message = document?.error ?? String(decoding: body.prefix(200), as: UTF8.self)
        return "HTTP \(status)" + (document?.errorType.map { " \($0)" } ?? "") + (message.isEmpty ? "" : ": \(message.prefix(200))")
    }
}

/// Tabby's API through the host's egress: JSON bodies with snake_case
/// members, `Authorization: Bearer <secret_key>`, on the host of the region.
struct TabbyClient: Sendable {
    /// A client by region; a region without one is not served.
    let regions: [TabbyRegion: ProviderHTTPClient]

    /// The clients of `bases` (each region's base URL).
    init(host: AdapterHost, bases: [TabbyRegion: String], timeoutMilliseconds: Int) {
        regions = bases.mapValues { base in
            var client = ProviderHTTPClient(host: host, provider: "Tabby", baseURL: base, timeoutMilliseconds: timeoutMilliseconds,
                                            authorization: .bearer(secret: "secret_key"))
            client.jsonKeys = .snakeCase
            return client
        }
    }

    /// Sends `body` (nil: none) to `path` on `region`'s host. An
    /// `HTTPEgressError` (no answer) is the caller's to classify.
    func send(_ method: String, _ path: String, region: TabbyRegion, _ body: (any Encodable & Sendable)? = nil) async throws -> TabbyAnswer {
        guard let client = regions[region] else {
            throw AdapterError.invalidRequest("config.base_url_\(region.rawValue) is not set, so Tabby's \(region.rawValue) region cannot be reached")
        }
        return try await client.send(method, path, body.map { .json($0) } ?? .none)
    }

    /// `GET /api/v2/payments/{id}`: nil when Tabby does not know it (404);
    /// a lost or unusable answer leaves the outcome unknown.
    func payment(_ reference: TabbyReference) async throws -> TabbyWire.Payment? {
        let answer: TabbyAnswer
        do {
            answer = try await send("GET", "/api/v2/payments/\(reference.paymentId)", region: reference.region)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Tabby's payment query got no answer: \(error.message)")
        }
        if answer.status == 404 { return nil }
        guard answer.ok, let payment = answer.decode(TabbyWire.Payment.self), payment.status != nil, payment.money(payment.amount) != nil else {
            throw AdapterError.outcomeUnknown("Tabby could not report payment \(reference.paymentId): \(answer.summary)")
        }
        return payment
    }
}
