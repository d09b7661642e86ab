import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The JSON document an adapter passes to `http_send`.
struct EgressRequest: Decodable, Sendable {
    var method: String
    var url: String
    var headers: [String: String]?
    /// Base64 of the body bytes.
    var body: String?
    var timeout_ms: Int?
}

/// The JSON document the host answers `http_send` with on `GW_OK`.
struct EgressResponse: Encodable, Sendable {
    var status: Int
    var headers: [String: String]
    /// Base64 of the body bytes.
    var body: String
}

/// Why an egress request was not answered with a response.
struct EgressFailure: Error, Sendable {
    /// The `gw_status` to report.
    var status: Int32
    var message: String
}

/// Performs HTTP requests for adapters once policy has allowed them.
public protocol HTTPEgressClient: Sendable {
    /// Sends `request` and returns the response, or throws ``EgressFailure``.
    func send(_ request: URLRequest) async throws -> (HTTPURLResponse, Data)
}
