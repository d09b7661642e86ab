import Foundation

/// The manifest's `egress` allowlist: the only `host:port` pairs an adapter's
/// HTTP requests may reach. An empty list allows nothing. Plain `http` is
/// refused except to loopback, where the local provider simulators listen.
struct EgressPolicy: Sendable {
    static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1", "[::1]"]
    let allowed: Set<Manifest.Endpoint>

    init(_ endpoints: [Manifest.Endpoint]) {
        allowed = Set(endpoints)
    }

    /// Checks `url`; returns the endpoint it targets or a message saying why not.
    func check(_ url: URL) -> Result<Manifest.Endpoint, EgressFailure> {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            return .failure(EgressFailure(.denied, "only http and https URLs are allowed"))
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else {
            return .failure(EgressFailure(.denied, "the URL has no host"))
        }
        if scheme == "http", !Self.loopbackHosts.contains(host) {
            return .failure(EgressFailure(.denied, "plain http is allowed only to loopback (local simulators); use https for \(host)"))
        }
        let endpoint = Manifest.Endpoint(host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
        guard allowed.contains(endpoint) else {
            return .failure(EgressFailure(.denied, "\(endpoint) is not in the manifest's egress allowlist"))
        }
        return .success(endpoint)
    }
}
