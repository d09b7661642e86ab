import Crypto
import Foundation
import NIOCore
import NIOSSL

/// Certificate pinning for https egress: after the handshake (which has
/// already verified the chain and host name), the SHA-256 of the server leaf
/// certificate's SubjectPublicKeyInfo DER must be one of the manifest's pins.
///
/// A mismatch fails the request as `GW_E_DENIED`: it is a refusal by the
/// adapter's own policy, decided before any byte of the request is written,
/// so the provider cannot have seen it and the adapter may treat it like any
/// other refused egress (never as an unknown outcome).
enum EgressPinning {
    /// The server presented a key none of the pins match.
    struct Mismatch: Error, CustomStringConvertible {
        /// `sha256/<base64>` of the key the server presented.
        var presented: String
        var description: String { "the server's certificate key \(presented) matches none of the manifest's tls.pins" }
    }

    /// `sha256/<base64>` of `certificate`'s SubjectPublicKeyInfo.
    static func pin(of certificate: NIOSSLCertificate) throws -> String {
        let spki = try certificate.extractPublicKey().toSPKIBytes()
        return "sha256/" + Data(SHA256.hash(data: spki)).base64EncodedString()
    }

    static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let ip = address?.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1"
    }

    /// A connection initializer that fails the connection unless its TLS peer's key is pinned.
    static func verifier(_ pins: Set<[UInt8]>) -> @Sendable (Channel) -> EventLoopFuture<Void> {
        { channel in
            channel.pipeline.handler(type: NIOSSLHandler.self)
                .map { Optional($0) }
                .recover { _ in nil }
                .flatMapThrowing { handler in
                    guard let handler else {
                        // Plain http (allowed to loopback only) has nothing to pin. Anywhere
                        // else, a connection without NIOSSL is refused rather than unpinned.
                        if isLoopback(channel.remoteAddress) { return }
                        throw Mismatch(presented: "(the TLS peer certificate is unavailable on this platform)")
                    }
                    guard let leaf = handler.peerCertificate else { throw Mismatch(presented: "(no certificate)") }
                    let presented = try pin(of: leaf)
                    guard let digest = Manifest.TLS.pinDigest(presented), pins.contains(digest) else {
                        throw Mismatch(presented: presented)
                    }
                }
        }
    }
}
