import Crypto
import Foundation
import GatewayAdapterSDK

/// One Worldline answer: the HTTP status and the body.
struct WorldlineAnswer: Sendable {
    var status: Int
    var body: Data

    var ok: Bool { (200..<300).contains(status) }

    func decode<T: Decodable>(_ type: T.Type) -> T? { try? JSONDecoder().decode(T.self, from: body) }

    /// The first error of an error answer.
    var error: WorldlineWire.APIError? { ok ? nil : decode(WorldlineWire.ErrorAnswer.self)?.errors?.first }

    /// `HTTP 402 30511001 (message)`, for messages: only an error's own
    /// fields are quoted.
    var summary: String {
        guard let error else { return "HTTP \(status)" }
        let code = error.errorCode ?? error.code ?? error.id ?? "?"
        return "HTTP \(status) \(code)" + (error.id.map { " \($0)" } ?? "") + (error.propertyName.map { " on \($0)" } ?? "")
    }
}

/// Worldline Direct's server API through the host's egress, every request
/// signed `GCS v1HMAC` (``WorldlineSigner``) with a `Date` from the host's
/// clock; POSTs carry `X-GCS-Idempotence-Key`. The API key id and secret
/// are read for each request and wiped after.
struct WorldlineClient: Sendable {
    let host: AdapterHost
    /// `https://payment.direct.worldline-solutions.com`, no trailing slash.
    let baseURL: String
    let merchantID: String
    let timeoutMilliseconds: Int

    /// `base_url` + `/v2/<merchant>` + `path`.
    func url(_ path: String) -> String { baseURL + "/v2/" + merchantID + path }

    func get(_ path: String) async throws -> WorldlineAnswer {
        try await send("GET", url(path), body: nil, idempotenceKey: nil)
    }

    func post(_ path: String, _ body: some Encodable & Sendable, idempotenceKey: String?) async throws -> WorldlineAnswer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try await send("POST", url(path), body: try encoder.encode(body), idempotenceKey: idempotenceKey)
    }

    /// The `X-GCS-Idempotence-Key` for the engine's key: Worldline takes at
    /// most 40 characters, and the engine's keys run from 45 to some 300
    /// (`<payment>:<operation>:<mode>:<merchant key>`), so the header carries
    /// the first 20 bytes of the key's SHA-256 in hex. The same engine key
    /// gives the same header on every retry, and two keys one header only
    /// with a 160-bit collision.
    static func idempotenceKey(_ engineKey: String) -> String {
        SHA256.hash(data: Data(engineKey.utf8)).prefix(20).map { String(format: "%02x", $0) }.joined()
    }

    /// Sends a request already encoded (a replayed create).
    func send(_ method: String, _ url: String, body: Data?, idempotenceKey: String?) async throws -> WorldlineAnswer {
        guard var keyID = host.secret("api_key_id"), !keyID.isEmpty, var secret = host.secret("api_secret"), !secret.isEmpty else {
            throw AdapterError.internal("the api_key_id and api_secret secrets are not configured, so nothing was sent to Worldline")
        }
        defer {
            for i in keyID.indices { keyID[i] = 0 }
            for i in secret.indices { secret[i] = 0 }
        }
        guard let path = WorldlineSigner.signedPath(of: url) else { throw AdapterError.internal("Worldline URL \(url.prefix(80)) cannot be read") }
        let date = WorldlineSigner.httpDate(host.now)
        var headers = ["Date": date, "Accept": "application/json"]
        let contentType: String? = body == nil ? nil : "application/json"
        if let contentType { headers["Content-Type"] = contentType }
        if let idempotenceKey { headers["X-GCS-Idempotence-Key"] = Self.idempotenceKey(idempotenceKey) }
        let text = WorldlineSigner.stringToHash(method: method, contentType: contentType, date: date, headers: headers, path: path)
        headers["Authorization"] = WorldlineSigner.authorization(keyID: String(decoding: keyID, as: UTF8.self),
                                                                 signature: WorldlineSigner.signature(text, secret: secret))
        let response = try await host.send(HTTPRequest(method: method, url: url, headers: headers, body: body, timeoutMilliseconds: timeoutMilliseconds))
        return WorldlineAnswer(status: response.status, body: response.bodyData)
    }
}
