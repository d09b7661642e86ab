import Foundation

/// One HTTP request an adapter asked for, already allowed by policy: the
/// host-neutral value an ``HTTPEgressClient`` sends.
public struct EgressHTTPRequest: Sendable {
    public var method: String
    public var url: URL
    /// The allowlisted `host:port` the URL targets.
    public var endpoint: Manifest.Endpoint
    /// Header names and values in the adapter's order.
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// How long the whole exchange may take, connecting included.
    public var timeout: Duration

    public init(method: String, url: URL, endpoint: Manifest.Endpoint, headers: [(name: String, value: String)],
                body: Data, timeout: Duration) {
        self.method = method
        self.url = url
        self.endpoint = endpoint
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// The full answer to an ``EgressHTTPRequest``, whatever its HTTP status.
public struct EgressHTTPResponse: Sendable {
    public var status: Int
    /// Lower-cased names; repeated headers joined with ", ".
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends adapters' HTTP requests once policy has allowed them. The host's
/// default is ``AsyncHTTPEgressClient``; tests inject fakes.
///
/// An adapter instance ``retain(_:)``s its TLS settings when it is created and
/// ``release(_:)``s them when it is destroyed, so an implementation can keep one
/// connection pool per distinct ``EgressTLS`` and close it when unused.
public protocol HTTPEgressClient: Sendable {
    /// Sends `request` with `tls` (used only for https), never following a
    /// redirect. Throws ``EgressFailure`` with the status the ABI documents.
    func send(_ request: EgressHTTPRequest, tls: EgressTLS) async throws(EgressFailure) -> EgressHTTPResponse
    /// An adapter instance using `tls` was created.
    func retain(_ tls: EgressTLS)
    /// An adapter instance using `tls` was destroyed.
    func release(_ tls: EgressTLS) async
}

extension HTTPEgressClient {
    public func retain(_ tls: EgressTLS) {}
    public func release(_ tls: EgressTLS) async {}
}
