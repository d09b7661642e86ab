import Foundation
import PluginHost

/// Where an endpoint's deliveries go, checked the way adapters' egress is
/// (``EgressAddress``): https to a public address. An address that is not
/// public (loopback, private, link-local, a cloud metadata service, ...) is
/// refused unless the operator allowed private endpoints
/// (`--allow-private-webhooks`, for local development), and plain http only
/// then, and only to such an address. Checked when an endpoint is
/// registered and again before each delivery (a name may answer otherwise
/// later); the egress client checks each connection's peer once more.
public struct WebhookTarget: Sendable, Equatable {
    public let url: URL
    /// Lower-cased, without an IPv6 address's brackets.
    public let host: String
    public let port: Int
    public let secure: Bool

    /// The addresses `--allow-private-webhooks` opens (a receiver on this
    /// machine or the local network); never a cloud metadata service, a
    /// link-local, multicast, unspecified or reserved address.
    static let privateKinds: Set<String> = ["loopback", "private", "private (unique local)", "site-local", "shared (carrier-grade NAT)"]

    /// The most a URL may hold.
    public static let maximumLength = 2048

    /// `text` as a target, or why it cannot be one.
    public init(_ text: String) throws(WebhookEndpointError) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength else {
            throw WebhookEndpointError("url must be an absolute https URL of at most \(Self.maximumLength) bytes")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let rawHost = components.host, !rawHost.isEmpty, let url = components.url else {
            throw WebhookEndpointError("url is not an absolute URL: \(Self.quoted(text))")
        }
        guard scheme == "https" || scheme == "http" else {
            throw WebhookEndpointError("url must be https (it is \(scheme))")
        }
        guard components.user == nil, components.password == nil else {
            throw WebhookEndpointError("url must not carry a user name or password (deliveries are signed instead)")
        }
        guard components.fragment == nil else { throw WebhookEndpointError("url must not have a fragment") }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        self.url = url
        self.host = host.lowercased()
        self.secure = scheme == "https"
        let port = components.port ?? (secure ? 443 : 80)
        guard (1...65_535).contains(port) else { throw WebhookEndpointError("url's port must be 1 to 65535 (it is \(port))") }
        self.port = port
    }

    /// Checks where the target leads now and answers the addresses that are
    /// not public that its deliveries may reach (none unless `allowPrivate`):
    /// what the egress client is told it may connect to.
    public func check(allowPrivate: Bool, resolve: @Sendable (String) async throws -> [String]) async throws(WebhookEndpointError) -> Set<String> {
        let addresses: [String]
        if EgressAddress.isAddress(host) {
            addresses = [host]
        } else {
            do {
                addresses = try await resolve(host)
            } catch {
                throw WebhookEndpointError("url's host \(host) cannot be resolved: \(error)")
            }
        }
        var named: Set<String> = []
        for address in addresses {
            if let kind = EgressAddress.kind(of: address) {
                guard Self.privateKinds.contains(kind) else {
                    throw WebhookEndpointError("url's host \(host) is a \(kind) address (\(address)), which no endpoint may use")
                }
                guard allowPrivate else {
                    throw WebhookEndpointError("url's host \(host) is a \(kind) address (\(address)); endpoints must be public unless the operator allows private ones (--allow-private-webhooks)")
                }
                named.insert("\(EgressAddress.canonical(address)):\(port)")
            } else if !secure {
                throw WebhookEndpointError("url must be https: plain http is allowed only to a private address, with --allow-private-webhooks (\(host) is public)")
            }
        }
        if !secure && !allowPrivate {
            throw WebhookEndpointError("url must be https (http is allowed only to a private address, with --allow-private-webhooks)")
        }
        return named
    }

    /// `text` for an error message: quoted, at most 120 characters.
    static func quoted(_ text: String) -> String {
        "\"\(text.prefix(120))\(text.count > 120 ? "…" : "")\""
    }
}

/// A request about an endpoint that cannot be done as asked: the API's 422.
public struct WebhookEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
