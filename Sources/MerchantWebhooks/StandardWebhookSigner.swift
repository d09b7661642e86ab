import CheckoutEngine
import Crypto
import Foundation

/// One key that signs an endpoint's deliveries, as the Standard Webhooks
/// specification (standardwebhooks.com) shapes it, so that a merchant can
/// verify with any of its libraries and never with code of ours.
///
/// - `v1` (``WebhookSigning/hmac``): a shared secret of 24 to 64 random
///   bytes, shown as `whsec_<base64>`; signatures are HMAC-SHA256.
/// - `v1a` (``WebhookSigning/ed25519``): an Ed25519 key pair. The secret
///   key is shown as `whsk_<base64>` of 64 bytes, the 32-byte seed followed
///   by its 32-byte public key (the layout of the specification's authors'
///   implementation, Svix, and of libsodium and Go); merchants hold only the
///   public key, `whpk_<base64 of 32 bytes>` (``publicKeyText``).
///
/// What is signed is the delivery's id, its timestamp and its body joined
/// by full stops (`id.timestamp.body`), so a captured delivery cannot be
/// replayed later (the timestamp) or passed off as another event (the id).
///
/// ```swift
/// let secret = WebhookSecret.generate(.hmac)
/// secret.text                      // "whsec_…", shown to the merchant once
/// secret.signature(id: "evt_ses_1_1", timestamp: 1_674_087_231, body: body)
/// // "v1,K5oZ…="
/// ```
///
/// Its description never shows the key: a secret that reaches a log line
/// or a test's failure message prints as `WebhookSecret(v1, redacted)`.
public struct WebhookSecret: Sendable {
    /// How it signs.
    public let signing: WebhookSigning
    /// The key bytes the text carries: the HMAC key (`v1`), or the Ed25519
    /// seed then its public key (`v1a`). What ``SecretSealer`` seals.
    public let raw: [UInt8]

    /// The number of random bytes a new `v1` secret holds (the
    /// specification allows 24 to 64).
    public static let generatedHMACLength = 32
    /// The lengths a `v1` secret may have.
    public static let hmacLengths = 24...64
    /// The length of a `v1a` secret key: a 32-byte seed, then its 32-byte public key.
    public static let ed25519Length = 64

    /// A new random secret.
    public static func generate(_ signing: WebhookSigning) -> WebhookSecret {
        switch signing {
        case .hmac:
            let key = SymmetricKey(size: SymmetricKeySize(bitCount: generatedHMACLength * 8))
            return WebhookSecret(checked: .hmac, raw: key.withUnsafeBytes { Array($0) })
        case .ed25519:
            let key = Curve25519.Signing.PrivateKey()
            return WebhookSecret(checked: .ed25519, raw: Array(key.rawRepresentation) + Array(key.publicKey.rawRepresentation))
        }
    }

    /// A secret from its text (``text``): `whsec_…` or `whsk_…`. Whitespace
    /// around it is ignored (a secret read from a file ends with a newline).
    /// Base64 without its trailing `=` is read too, as the reference
    /// libraries read it.
    public init(text: String) throws(WebhookSecretError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let signing = WebhookSigning.allCases.first(where: { trimmed.hasPrefix($0.secretPrefix) }) else {
            if trimmed.hasPrefix(WebhookSecret.publicKeyPrefix) { throw WebhookSecretError.publicKeyInsteadOfSecret }
            throw WebhookSecretError.unknownPrefix
        }
        guard let bytes = WebhookSecret.base64Bytes(trimmed.dropFirst(signing.secretPrefix.count)) else {
            throw .notBase64(signing)
        }
        try self.init(signing: signing, raw: bytes)
    }

    /// A secret from its key bytes (``raw``), as ``SecretSealer`` opens them:
    /// checked as ``init(text:)`` checks the bytes of a text.
    public init(signing: WebhookSigning, raw: [UInt8]) throws(WebhookSecretError) {
        switch signing {
        case .hmac:
            guard WebhookSecret.hmacLengths.contains(raw.count) else { throw .hmacLength(raw.count) }
        case .ed25519:
            guard raw.count == WebhookSecret.ed25519Length else { throw .ed25519Length(raw.count) }
            // A damaged second half would give merchants a public key that
            // verifies nothing this key signs.
            guard let derived = try? Curve25519.Signing.PrivateKey(rawRepresentation: Array(raw.prefix(32))).publicKey.rawRepresentation,
                  Array(derived) == Array(raw.suffix(32)) else { throw .publicKeyMismatch }
        }
        self.init(checked: signing, raw: raw)
    }

    private init(checked signing: WebhookSigning, raw: [UInt8]) {
        self.signing = signing
        self.raw = raw
    }

    /// The secret as shown once to the merchant (`v1`) or kept by the
    /// operator (`v1a`): `whsec_<base64>` or `whsk_<base64>`.
    public var text: String { signing.secretPrefix + Data(raw).base64EncodedString() }

    /// For `v1a`, the public key merchants verify with: `whpk_<base64 of the
    /// 32-byte raw key>`. Nil for `v1`, whose secret is its own verifier.
    public var publicKeyText: String? {
        switch signing {
        case .hmac: nil
        case .ed25519: WebhookSecret.publicKeyPrefix + Data(raw.suffix(32)).base64EncodedString()
        }
    }

    /// The signature of one delivery: `v1,<base64 HMAC-SHA256>` or
    /// `v1a,<base64 Ed25519 signature>` over `id.timestamp.body`.
    ///
    /// - Parameters:
    ///   - id: the delivery's `webhook-id`. It may not hold a `.`: the
    ///     specification forbids it, as it would make `id.timestamp.body`
    ///     ambiguous (ours are `evt_…` ids, made here, never a caller's).
    ///   - timestamp: the `webhook-timestamp`, seconds since 1970, of this try.
    ///   - body: the exact bytes sent.
    public func signature(id: String, timestamp: Int64, body: some DataProtocol) -> String {
        precondition(!id.utf8.contains(UInt8(ascii: ".")), "a webhook id may not contain a full stop (Standard Webhooks)")
        var message = Data()
        message.reserveCapacity(id.utf8.count + 22 + body.count)
        message.append(contentsOf: id.utf8)
        message.append(UInt8(ascii: "."))
        message.append(contentsOf: String(timestamp).utf8)
        message.append(UInt8(ascii: "."))
        message.append(contentsOf: body)

        let signed: Data
        switch signing {
        case .hmac:
            signed = Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: raw)))
        case .ed25519:
            do {
                signed = try Curve25519.Signing.PrivateKey(rawRepresentation: Array(raw.prefix(32))).signature(for: message)
            } catch {
                // The seed's length was checked when the secret was made; signing has no other way to fail.
                preconditionFailure("Ed25519 signing failed on a checked key: \(error)")
            }
        }
        return signing.rawValue + "," + signed.base64EncodedString()
    }

    static let publicKeyPrefix = "whpk_"

    /// Standard base64, its padding optional.
    private static func base64Bytes(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty else { return nil }
        var padded = String(text)
        switch padded.utf8.count % 4 {
        case 2: padded += "=="
        case 3: padded += "="
        default: break
        }
        return Data(base64Encoded: padded).map(Array.init)
    }
}

extension WebhookSecret: Equatable {
    /// Same scheme and same key, compared in constant time: equality of two
    /// secrets must not tell, by how long it takes, how much of one matched.
    public static func == (a: WebhookSecret, b: WebhookSecret) -> Bool {
        guard a.signing == b.signing, a.raw.count == b.raw.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a.raw, b.raw) { difference |= x ^ y }
        return difference == 0
    }
}

extension WebhookSecret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `WebhookSecret(v1, redacted)`; a `v1a` key shows its public key, which is no secret.
    public var description: String {
        "WebhookSecret(\(signing.rawValue), \(publicKeyText ?? "redacted"))"
    }

    public var debugDescription: String { description }

    /// What `dump` and test failure messages show: the scheme only.
    public var customMirror: Mirror { Mirror(self, children: ["signing": signing], displayStyle: .struct) }
}

extension WebhookSigning {
    /// What a secret's text begins with.
    var secretPrefix: String {
        switch self {
        case .hmac: "whsec_"
        case .ed25519: "whsk_"
        }
    }
}

/// The headers of a delivery (Standard Webhooks, "Webhook headers").
public enum StandardWebhooks {
    /// The header every delivery's id is sent in (the same at every try).
    public static let idHeader = "webhook-id"
    /// The header of the try's time, whole seconds since 1970.
    public static let timestampHeader = "webhook-timestamp"
    /// The header of the signatures, space separated.
    public static let signatureHeader = "webhook-signature"

    /// The headers of one try of a delivery: `webhook-id`,
    /// `webhook-timestamp`, `webhook-signature` and `content-type`.
    ///
    /// `webhook-signature` holds one signature per secret, in the order
    /// given: the current secret first, then one being rotated out. A
    /// receiver accepts a delivery when any one of them verifies, so a
    /// merchant can move to the new secret at any time during the overlap.
    ///
    /// - Parameter secrets: at least one.
    public static func headers(id: String, timestamp: Int64, body: Data, secrets: [WebhookSecret]) -> [(name: String, value: String)] {
        precondition(!secrets.isEmpty, "a delivery is signed with at least one secret")
        let signatures = secrets.map { $0.signature(id: id, timestamp: timestamp, body: body) }
        return [
            (idHeader, id),
            (timestampHeader, String(timestamp)),
            (signatureHeader, signatures.joined(separator: " ")),
            ("content-type", "application/json"),
        ]
    }
}

/// What is wrong with a secret's text or bytes. It never holds or shows the
/// secret: a mistyped secret is still mostly a secret.
public enum WebhookSecretError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither `whsec_` nor `whsk_`.
    case unknownPrefix
    /// A `whpk_` public key, which verifies but cannot sign.
    case publicKeyInsteadOfSecret
    /// What follows the prefix is not standard base64.
    case notBase64(WebhookSigning)
    /// A `whsec_` secret of this many bytes (24 to 64 are allowed).
    case hmacLength(Int)
    /// A `whsk_` key of this many bytes (64 are expected).
    case ed25519Length(Int)
    /// A `whsk_` key whose second half is not the public key of its first.
    case publicKeyMismatch

    public var description: String {
        switch self {
        case .unknownPrefix:
            "a webhook signing secret begins with whsec_ (v1, HMAC-SHA256) or whsk_ (v1a, Ed25519)"
        case .publicKeyInsteadOfSecret:
            "this is a public key (whpk_): it verifies signatures but cannot make them; signing needs the secret key (whsk_)"
        case .notBase64(let signing):
            "what follows \(signing.secretPrefix) is not base64"
        case .hmacLength(let count):
            "a whsec_ secret holds \(WebhookSecret.hmacLengths.lowerBound) to \(WebhookSecret.hmacLengths.upperBound) bytes; this one holds \(count)"
        case .ed25519Length(let count):
            "a whsk_ key holds \(WebhookSecret.ed25519Length) bytes (the Ed25519 seed, then its public key); this one holds \(count)"
        case .publicKeyMismatch:
            "the last 32 bytes of this whsk_ key are not the public key of its first 32: the key is damaged"
        }
    }
}
