import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
import Synchronization

/// The API keys of merchants' backends: how one is made, listed, revoked,
/// and how a key a request presents is checked (the HTTP layer reads it from
/// `Authorization: Bearer <key>`; ``PaymentGateway/keys`` is the gateway's).
///
/// - A key names its mode: `gk_test_` or `gk_live_`, then 32 characters of
///   base 32, 160 bits drawn from the system's CSPRNG
///   (`SystemRandomNumberGenerator`: `getrandom` on Linux).
/// - Only the key's SHA-256 is stored (``APIKeyStore``), with a display
///   prefix (`gk_test_ab12…`). With 160 random bits there is nothing to guess,
///   so a plain hash (no salt, no stretching) is enough, and a key is found by
///   its hash with one index probe.
/// - A key is checked by its shape first (something that cannot be a key
///   costs no lookup), then by its hash: in a small in-memory cache of keys
///   verified in the last ``cacheFor``, else in the store; the stored hash is
///   compared with the computed one in constant time. The key itself is never
///   compared, logged or kept.
/// - Revoking a key through this value (the same process) takes effect on
///   the next request. A key revoked by another process (`gateway keys
///   revoke` beside a running server) is refused once its cache entry
///   expires: within ``cacheFor`` (one second by default).
public final class APIKeys: Sendable {
    /// A key just made: its secret (shown once, never stored) and its record.
    public struct Issued: Sendable {
        public var secret: String
        public var record: APIKeyRecord
    }

    /// What a presented key comes to.
    public enum Verdict: Sendable, Equatable {
        case admitted(APIKeyRecord)
        /// Not a working key: malformed, unknown or revoked (why, for the
        /// problem's detail; never the key).
        case refused(String)
    }

    let store: any APIKeyStore
    /// How long a verified key is trusted without asking the store again.
    public let cacheFor: Duration

    private struct Verified {
        var record: APIKeyRecord
        var until: ContinuousClock.Instant
    }

    private let verified = Mutex<[SHA256Digest: Verified]>([:])
    /// Only working keys are cached; past this many (far more keys than a
    /// merchant has), the cache starts over.
    private static let cacheLimit = 1024

    public init(store: any APIKeyStore, cacheFor: Duration = .seconds(1)) {
        self.store = store
        self.cacheFor = cacheFor
    }

    // MARK: Making and managing keys

    /// Makes a key of `mode` and records it; the secret is in the answer only.
    public func issue(mode: PaymentMode, name: String? = nil) async throws -> Issued {
        let issued = Self.newKey(mode: mode, name: name)
        try await store.createAPIKey(issued.record)
        return issued
    }

    /// Every key, oldest first (records only: the store has no secrets).
    public func list() async throws -> [APIKeyRecord] {
        try await store.apiKeys()
    }

    /// Revokes key `id`; this server refuses it from the next request.
    /// Nil when there is no such key.
    public func revoke(id: String) async throws -> APIKeyRecord? {
        let revoked = try await store.revokeAPIKey(id: id, at: Date())
        verified.withLock { cache in
            for (digest, entry) in cache where entry.record.id == id { cache[digest] = nil }
        }
        return revoked
    }

    /// Records a key made with ``newKey(mode:name:at:)`` (`gateway serve`
    /// writes its first key's file before recording it).
    public func record(_ issued: Issued) async throws {
        try await store.createAPIKey(issued.record)
    }

    /// A new key of `mode`, not recorded yet (``issue(mode:name:)`` records
    /// it, or ``record(_:)``).
    public static func newKey(mode: PaymentMode, name: String? = nil, at: Date = Date()) -> Issued {
        var generator = SystemRandomNumberGenerator()
        var secret = Array("gk_\(mode.rawValue)_".utf8)
        for _ in 0..<secretLength { secret.append(alphabet[Int(UInt8.random(in: 0..<32, using: &generator))]) }
        let text = String(decoding: secret, as: UTF8.self)
        // A key made here always has the shape `record(forSecret:)` checks.
        return Issued(secret: text, record: record(forSecret: text, name: name, at: at)!)
    }

    /// The record of key `secret` (its id new): nil when `secret` does not
    /// have a key's shape.
    public static func record(forSecret secret: String, name: String? = nil, at: Date = Date()) -> APIKeyRecord? {
        guard let mode = mode(ofSecret: secret) else { return nil }
        return APIKeyRecord(id: APIKeyRecord.newID(), name: name, mode: mode, hash: Hex.lowercase(digest(secret)),
                            prefix: String(secret.prefix(mode.rawValue.count + 8)) + "…", createdAt: at)
    }

    /// The mode a key names, when `secret` has a key's shape: `gk_test_` or
    /// `gk_live_` and exactly 32 characters of the alphabet.
    public static func mode(ofSecret secret: String) -> PaymentMode? {
        let bytes = secret.utf8
        for mode in PaymentMode.allCases {
            let prefix = "gk_\(mode.rawValue)_".utf8
            guard bytes.count == prefix.count + secretLength, bytes.starts(with: prefix) else { continue }
            return bytes.dropFirst(prefix.count).allSatisfy(isAlphabet) ? mode : nil
        }
        return nil
    }

    /// Characters of random after the mode: 32 of base 32, 160 bits.
    static let secretLength = 32
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || ((0x61...0x7A).contains(byte) && byte != UInt8(ascii: "i") && byte != UInt8(ascii: "l")
            && byte != UInt8(ascii: "o") && byte != UInt8(ascii: "u"))
    }

    private static func digest(_ secret: String) -> SHA256Digest {
        var secret = secret
        return secret.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
    }

    // MARK: Checking a request

    /// What the key `token` comes to. Throws only when the store cannot be
    /// read (never a refusal or an admission): ``StoreUnavailable`` as it
    /// is, which the API answers `503` with a detail that does not repeat
    /// its reason, else an `internal_error` problem.
    public func verify(_ token: String) async throws -> Verdict {
        guard Self.mode(ofSecret: token) != nil else {
            return .refused("the bearer token is not an API key (gk_test_… or gk_live_… and 32 characters)")
        }
        let digest = Self.digest(token)
        let now = ContinuousClock.now
        if let hit = verified.withLock({ $0[digest] }), hit.until > now {
            return .admitted(hit.record)
        }
        let hash = Hex.lowercase(digest)
        let found: APIKeyRecord?
        do {
            found = try await store.apiKey(hash: hash)
        } catch let error where !(error is StoreUnavailable) {
            throw ProblemCatalog.problem(code: .internalError, detail: "the API keys cannot be read: \(error)", retryable: true)
        }
        guard let found, Self.constantTimeEqual(found.hash, hash) else {
            verified.withLock { $0[digest] = nil }
            return .refused("no such API key")
        }
        guard !found.isRevoked else {
            verified.withLock { $0[digest] = nil }
            return .refused("this API key (\(found.id)) was revoked")
        }
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[digest] = Verified(record: found, until: now + cacheFor)
        }
        return .admitted(found)
    }

    /// Whether `a` and `b` are the same, in time that depends on their
    /// length only (both are 64-character hashes).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
