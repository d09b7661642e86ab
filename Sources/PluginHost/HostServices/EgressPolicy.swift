import Foundation

/// The manifest's `egress` allowlist: the only `host:port` pairs an adapter's
/// HTTP requests may reach. An empty list allows nothing.
struct EgressPolicy: Sendable {
    let allowed: Set<Manifest.Endpoint>

    init(_ endpoints: [Manifest.Endpoint]) {
        allowed = Set(endpoints)
    }

    /// Checks `url`; returns the endpoint it targets or a message saying why not.
    func check(_ url: URL) -> Result<Manifest.Endpoint, EgressFailure> {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            return .failure(EgressFailure(status: 9, message: "only http and https URLs are allowed"))
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else {
            return .failure(EgressFailure(status: 9, message: "the URL has no host"))
        }
        let endpoint = Manifest.Endpoint(host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
        guard allowed.contains(endpoint) else {
            return .failure(EgressFailure(status: 9, message: "\(endpoint) is not in the manifest's egress allowlist"))
        }
        return .success(endpoint)
    }
}
