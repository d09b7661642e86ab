import Foundation
import GatewayAdapterSDK

/// One Tabby answer: the HTTP status and the body.
struct TabbyAnswer: Sendable {
    var status: Int
    var body: Data

    var ok: Bool { (200..<300).contains(status) }

    /// The body as `T` (snake_case members), or nil.
    func decode<T: Decodable>(_ type: T.Type) -> T? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(T.self, from: body)
    }

    /// Tabby's error document, `{"status": "error", "errorType": …, "error": …}`.
    struct ErrorDocument: Decodable {
        var errorType: String?
        var error: String?
    }

    /// `errorType` (bad_data, not_authorized, no_permission, not_found, conflict), if any.
    var errorType: String? {
        (try? JSONDecoder().decode(ErrorDocument.self, from: body))?.errorType
    }

    /// `HTTP 400 bad_data: <error>`, for messages.
    var summary: String {
        let document = try? JSONDecoder().decode(ErrorDocument.self, from: body)
        let message = document?.error ?? String(decoding: body.prefix(200), as: UTF8.self)
        return "HTTP \(status)" + (document?.errorType.map { " \($0)" } ?? "") + (message.isEmpty ? "" : ": \(message.prefix(200))")
    }
}

/// Tabby's API through the host's egress: JSON bodies with snake_case
/// members, `Authorization: Bearer <secret_key>`, on the host of the region.
struct TabbyClient: Sendable {
    let host: AdapterHost
    /// Base URL by region; a region without one is not served.
    let baseURLs: [TabbyRegion: String]
    let timeoutMilliseconds: Int

    /// Sends `body` (nil: none) to `path` on `region`'s host. An
    /// `HTTPEgressError` (no answer) is the caller's to classify.
    func send(_ method: String, _ path: String, region: TabbyRegion, _ body: (any Encodable & Sendable)? = nil) async throws -> TabbyAnswer {
        guard let base = baseURLs[region] else {
            throw AdapterError.invalidRequest("config.base_url_\(region.rawValue) is not set, so Tabby's \(region.rawValue) region cannot be reached")
        }
        guard var key = host.secret("secret_key"), !key.isEmpty else {
            throw AdapterError.internal("the secret_key secret is not configured, so nothing was sent to Tabby")
        }
        defer { for i in key.indices { key[i] = 0 } }
        var headers = ["Authorization": "Bearer " + String(decoding: key, as: UTF8.self), "Accept": "application/json"]
        var data: Data?
        if let body {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(body)
            headers["Content-Type"] = "application/json"
        }
        let response = try await host.send(HTTPRequest(method: method, url: base + path, headers: headers, body: data,
                                                       timeoutMilliseconds: timeoutMilliseconds))
        return TabbyAnswer(status: response.status, body: response.bodyData)
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
