import Crypto
import Foundation
import GatewayAdapterSDK

/// One Worldline answer: the HTTP status and the body.
typealias WorldlineAnswer = ProviderResponse

extension ProviderResponse {
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
    let http: ProviderHTTPClient
    let merchantID: String

    init(host: AdapterHost, configuration: AdapterConfiguration, merchantID: String) throws {
        http = try ProviderHTTPClient(
            host: host, provider: "Worldline", configuration: configuration, example: "https://payment.direct.worldline-solutions.com",
            authorization: .signed(secrets: ["api_key_id", "api_secret"]) { request, secrets, host in
                try WorldlineSigner.sign(&request, keyID: secrets[0], secret: secrets[1], at: host.now)
            })
        self.merchantID = merchantID
    }

    /// `base_url` + `/v2/<merchant>` + `path`.
    func url(_ path: String) -> String { http.baseURL + "/v2/" + merchantID + path }

    func get(_ path: String) async throws -> WorldlineAnswer {
        try await http.send("GET", url(path))
    }

    func post(_ path: String, _ body: some Encodable & Sendable, idempotenceKey: String?) async throws -> WorldlineAnswer {
        try await http.send("POST", url(path), .json(body), headers: Self.idempotenceHeader(idempotenceKey))
    }

    /// Sends a request already encoded (a replayed create).
    func send(_ method: String, _ url: String, body: Data?, idempotenceKey: String?) async throws -> WorldlineAnswer {
        try await http.send(method, url, body.map { .raw($0, contentType: "application/json") } ?? .none, headers: Self.idempotenceHeader(idempotenceKey))
    }

    static func idempotenceHeader(_ engineKey: String?) -> [String: String] {
        engineKey.map { ["X-GCS-Idempotence-Key": idempotenceKey($0)] } ?? [:]
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
}
