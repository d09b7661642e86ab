import Foundation
import NIOCore
import NIOPosix

/// Egress by address: where an allowlisted name may lead.
///
/// The allowlist names hosts; a name is only as good as what it resolves to.
/// An allowlisted name that resolves to the host's own loopback, a private
/// network, a link-local address or a cloud metadata service would let an
/// adapter reach what the allowlist never named (the local PostgreSQL, the
/// checkout API, an instance's credentials). So:
///
/// - Before connecting, the host resolves the name itself (getaddrinfo, off
///   the cooperative pool) and refuses the request, nothing sent, when any
///   address it resolves to is not public (``kind(of:)``); a name that
///   passed is looked up again after 30 seconds, not for every request.
/// - When connecting, the client resolves again (a name can answer
///   differently a moment later: DNS rebinding). Each new connection's peer
///   address is checked once more, after the TLS handshake and before any
///   byte of a request is written (``verifier(_:)``): the request goes only
///   to an address that passed the check.
/// - An address that is not public is reachable only where the allowlist
///   names it: an entry whose host is that IP address (`10.1.2.3:8443`), or
///   `localhost` (loopback), at that port. That is how the local provider
///   simulators are reached.
public enum EgressAddress {
    /// Why `address` (an IPv4 or IPv6 address, textual) is not a public
    /// address: "loopback", "private", ...; nil when it is public.
    public static func kind(of address: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return kind(ipv4: withUnsafeBytes(of: v4.s_addr) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return "not an IP address" }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<15].allSatisfy({ $0 == 0 }) { return b[15] == 1 ? "loopback" : b[15] == 0 ? "unspecified" : "reserved" }
        // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) carry an IPv4 address: judged as it.
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return kind(ipv4: Array(b[12..<16])) }
        // IPv4-compatible (::a.b.c.d, deprecated): never a public destination.
        if b[0..<12].allSatisfy({ $0 == 0 }) { return "reserved (IPv4-compatible)" }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return kind(ipv4: Array(b[12..<16])) }
        if b[0] == 0xFF { return "multicast" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "site-local" }
        if b[0] & 0xFE == 0xFC { return b[0..<16] == [0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54] ? "cloud metadata" : "private (unique local)" }
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return "reserved (documentation)" }
        return nil
    }

    /// `kind(of:)` for the four bytes of an IPv4 address, in network order.
    private static func kind(ipv4 b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "unspecified"
        case (127, _): return "loopback"
        case (10, _), (172, 16...31), (192, 168): return "private"
        case (169, 254): return b[2] == 169 && b[3] == 254 ? "cloud metadata" : "link-local"
        case (100, 64...127): return "shared (carrier-grade NAT)"
        case (192, 0) where b[2] == 0 || b[2] == 2: return "reserved"
        case (198, 18...19): return "reserved (benchmarking)"
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return "reserved (documentation)"
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved"
        default: return nil
        }
    }

    /// Whether `host` is an IP address (a name needs resolving; an address does not).
    public static func isAddress(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// The addresses that are not public which `endpoints` (an allowlist)
    /// name, as `address:port` (IPv6 unbracketed): an IP address entry, and
    /// `localhost` as both loopbacks.
    public static func named(in endpoints: [Manifest.Endpoint]) -> Set<String> {
        var named: Set<String> = []
        for endpoint in endpoints {
            let host = endpoint.host.hasPrefix("[") ? String(endpoint.host.dropFirst().dropLast()) : endpoint.host
            if host == "localhost" {
                named.formUnion(["127.0.0.1:\(endpoint.port)", "::1:\(endpoint.port)"])
            } else if isAddress(host), kind(of: host) != nil {
                named.insert("\(canonical(host)):\(endpoint.port)")
            }
        }
        return named
    }

    /// An address as inet_ntop writes it (so `::0001` and `::1` are one).
    public static func canonical(_ address: String) -> String {
        var v6 = in6_addr()
        guard !address.contains("."), inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil else { return address }
        return String(cString: text)
    }

    /// Why a connection to `address` at `port` is refused, or nil when it may go.
    static func refusal(_ address: String, port: Int, named: Set<String>) -> String? {
        guard let kind = kind(of: address), !named.contains("\(canonical(address)):\(port)") else { return nil }
        return "\(address) is a \(kind) address, which the manifest's egress allowlist does not name (an entry \"\(address.contains(":") ? "[\(address)]" : address):\(port)\" would)"
    }

    /// The request was refused for where it would go; nothing was sent.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// The name could not be resolved; nothing was sent.
    struct Unresolvable: Error, CustomStringConvertible {
        var description: String
    }

    /// Every address of `host` (a name), from getaddrinfo on NIO's
    /// blocking-work pool (never a thread of the cooperative pool).
    public static func systemResolve(_ host: String) async throws -> [String] {
        try await systemResolve(host, on: NIOThreadPool.singleton)
    }

    /// ``systemResolve(_:)`` on `pool`'s threads (a pool of the caller's own).
    public static func systemResolve(_ host: String, on pool: NIOThreadPool) async throws -> [String] {
        do {
            return try await pool.runIfActive { try resolve(host) }
        } catch let failure as Unresolvable {
            throw failure
        } catch {
            throw Unresolvable(description: "cannot resolve \(host): \(error)")
        }
    }

    /// Refuses `host` when any of its `addresses` is not one the allowlist
    /// permits at `port`.
    static func check(_ host: String, port: Int, addresses: [String], named: Set<String>) throws(Refused) {
        guard !addresses.isEmpty else { throw Refused(description: "\(host) resolves to no address") }
        for address in addresses {
            if let why = refusal(address, port: port, named: named) {
                throw Refused(description: "\(host) resolves to \(why)")
            }
        }
    }

    /// Every address getaddrinfo gives `host` (blocking: not on the cooperative pool).
    private static func resolve(_ host: String) throws -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0 else { throw Unresolvable(description: "cannot resolve \(host): \(String(cString: gai_strerror(code)))") }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var next = list
        while let entry = next {
            if let address = entry.pointee.ai_addr.flatMap(text(of:)) { addresses.append(address) }
            next = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw Unresolvable(description: "\(host) resolves to no address") }
        return addresses
    }

    /// The textual address of an IPv4 or IPv6 socket address; nil for another family.
    private static func text(of address: UnsafeMutablePointer<sockaddr>) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &v4, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(cString: text)
    }

    /// A connection initializer that fails a connection whose peer is an
    /// address the allowlist does not permit (before any request is written).
    static func verifier(_ named: Set<String>) -> @Sendable (Channel) -> EventLoopFuture<Void> {
        { channel in
            guard let peer = channel.remoteAddress, let address = peer.ipAddress, let port = peer.port else {
                return channel.eventLoop.makeFailedFuture(Refused(description: "the connection has no peer address to check"))
            }
            if let why = refusal(address, port: port, named: named) {
                return channel.eventLoop.makeFailedFuture(Refused(description: "the connection went to \(why)"))
            }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
    }
}
