import Foundation
import GatewayPayloads

/// Where the API keys of merchants' backends are kept: a record per key with
/// a hash of its secret, never the secret itself.
///
/// The secret is shown once, when the key is made; the store can only say
/// whether a secret someone presents hashes to a key it knows. A key is never
/// deleted: a revoked one stays, with the time it was revoked, so that the
/// list says what each key was and when it stopped working.
public protocol APIKeyStore: Sendable {
    /// Records a new key. Its id and its hash must both be new.
    func createAPIKey(_ key: APIKeyRecord) async throws
    /// The key whose secret hashes to `hash` (lower-case hexadecimal
    /// SHA-256), revoked or not; nil when there is none.
    func apiKey(hash: String) async throws -> APIKeyRecord?
    /// Every key, revoked ones included, oldest first.
    func apiKeys() async throws -> [APIKeyRecord]
    /// Revokes key `id` as of `at` (a key revoked already keeps its first
    /// time) and returns it as it now is; nil when there is no such key.
    func revokeAPIKey(id: String, at: Date) async throws -> APIKeyRecord?
}

/// One API key as stored: what it is for, never its secret.
public struct APIKeyRecord: Sendable, Equatable {
    /// `key_…`: how ops name the key (to list or revoke it).
    public var id: String
    /// What the key is for, as its creator said (optional).
    public var name: String?
    /// The mode of every session the key opens, and the only mode it sees.
    public var mode: PaymentMode
    /// The SHA-256 of the secret, in lower-case hexadecimal. The secret has
    /// 160 random bits, so a plain hash is enough: there is nothing to guess.
    public var hash: String
    /// The secret's first characters and an ellipsis (`gk_test_ab12…`), to
    /// tell keys apart in a list; too short to be of use to anyone else.
    public var prefix: String
    public var createdAt: Date
    /// Nil while the key works.
    public var revokedAt: Date?

    public init(id: String, name: String?, mode: PaymentMode, hash: String, prefix: String, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.mode = mode
        self.hash = hash
        self.prefix = prefix
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public var isRevoked: Bool { revokedAt != nil }

    /// A new key id: `key_` and a time-ordered random part, as session ids.
    public static func newID() -> String { Identifiers.make("key") }
}
