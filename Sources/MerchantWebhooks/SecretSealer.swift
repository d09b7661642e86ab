import CheckoutEngine
import Crypto
import Foundation
import PluginHost

/// Seals endpoints' signing secrets for the store (AES-256-GCM), so that a
/// copy of the database alone (a backup, a replica, a dump in a ticket)
/// signs nothing: the key lives in a file of its own (``loadKey(at:)``).
///
/// A sealed secret is bound to its endpoint and its scheme: the endpoint id
/// and the signing scheme are authenticated with it, so one copied into
/// another endpoint's row, or read as the other scheme, does not open.
/// Each seal draws a new random nonce: sealing the same secret twice gives
/// different bytes.
///
/// ```swift
/// let sealer = try SecretSealer(key: SecretSealer.loadKey(at: data.appendingPathComponent("webhook-secrets.key")))
/// let sealed = try sealer.seal(secret, endpointID: endpoint.id)
/// let again = try sealer.open(sealed, endpointID: endpoint.id, signing: secret.signing)
/// ```
public struct SecretSealer: Sendable {
    /// The length of the key: AES-256.
    public static let keyLength = 32

    private let key: SymmetricKey

    /// A sealer under `key` (32 bytes).
    public init(key: Data) throws {
        guard key.count == SecretSealer.keyLength else { throw SecretSealerError.keyLength(key.count) }
        self.key = SymmetricKey(data: key)
    }

    /// `secret` sealed for endpoint `endpointID`: AES-GCM's combined
    /// representation (nonce, ciphertext, tag).
    /// What says which key this is without revealing it: an HMAC under the
    /// key of a fixed text, lower-case hexadecimal. Hosts sharing a store
    /// must agree on it (``WebhookStore/agreeOnSealingKey(check:)``).
    public var check: String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("gateway webhook sealing key check v1".utf8), using: key)
        return code.map { String(format: "%02x", $0) }.joined()
    }

    public func seal(_ secret: WebhookSecret, endpointID: String) throws -> Data {
        let box = try AES.GCM.seal(secret.raw, using: key,
                                   authenticating: SecretSealer.authenticatedData(endpointID: endpointID, signing: secret.signing))
        // Nil only for a nonce of another length than the standard 12 bytes, and the nonce here is the standard one.
        guard let combined = box.combined else { preconditionFailure("AES-GCM with a 12-byte nonce has a combined representation") }
        return combined
    }

    /// The secret `sealed` holds, sealed for endpoint `endpointID` with
    /// scheme `signing`.
    ///
    /// Throws ``SecretSealerError/cannotOpen(endpointID:)`` when the bytes do
    /// not open under this key for that endpoint and scheme: in practice the
    /// key file is not the one that sealed them.
    public func open(_ sealed: Data, endpointID: String, signing: WebhookSigning) throws -> WebhookSecret {
        let raw: Data
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            raw = try AES.GCM.open(box, using: key, authenticating: SecretSealer.authenticatedData(endpointID: endpointID, signing: signing))
        } catch {
            throw SecretSealerError.cannotOpen(endpointID: endpointID)
        }
        do throws(WebhookSecretError) {
            return try WebhookSecret(signing: signing, raw: Array(raw))
        } catch {
            // Authentic bytes that are no secret: sealed by a build that checked less.
            throw SecretSealerError.notASecret(endpointID: endpointID, error)
        }
    }

    /// `endpointID`, a zero byte, the scheme (`v1`, `v1a`): the zero byte
    /// keeps one pair from reading as another.
    private static func authenticatedData(endpointID: String, signing: WebhookSigning) -> Data {
        var data = Data(endpointID.utf8)
        data.append(0)
        data.append(contentsOf: signing.rawValue.utf8)
        return data
    }

    /// The 32-byte key in the file at `url`, made (random, owner-only, mode
    /// 0600) if there is no file yet.
    ///
    /// A new key is written durably (``AtomicFile``: a temporary file,
    /// `fsync`, rename, `fsync` of the folder) before it is used: a secret
    /// sealed under a key that a power cut then took away could never be
    /// opened, and its endpoint would need a new secret. A file that exists
    /// but cannot be read is an error, never replaced: replacing it would
    /// lose every sealed secret. Hosts that share a database must share this
    /// file too.
    public static func loadKey(at url: URL) throws -> Data {
        if FileManager.default.fileExists(atPath: url.path) {
            let existing: Data
            do { existing = try Data(contentsOf: url) } catch { throw SecretSealerError.keyFileUnreadable(path: url.path, detail: "\(error)") }
            guard existing.count == keyLength else { throw SecretSealerError.keyFileLength(path: url.path, count: existing.count) }
            return existing
        }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try AtomicFile.write(key, to: url, permissions: 0o600)
        } catch {
            throw SecretSealerError.keyFileUnwritable(path: url.path, detail: "\(error)")
        }
        return key
    }
}

/// Why a secret could not be sealed or opened, or the key not loaded. None
/// of them holds a secret or a key.
public enum SecretSealerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key of this many bytes was given (32 are needed).
    case keyLength(Int)
    /// An endpoint's sealed secret does not open under this key.
    case cannotOpen(endpointID: String)
    /// An endpoint's sealed secret opened but is not a valid secret of its scheme.
    case notASecret(endpointID: String, WebhookSecretError)
    /// The key file holds this many bytes (32 are needed).
    case keyFileLength(path: String, count: Int)
    /// The key file exists but cannot be read.
    case keyFileUnreadable(path: String, detail: String)
    /// A new key file could not be written.
    case keyFileUnwritable(path: String, detail: String)

    public var description: String {
        switch self {
        case .keyLength(let count):
            "a webhook secret sealing key holds \(SecretSealer.keyLength) bytes; this one holds \(count)"
        case .cannotOpen(let endpointID):
            "the signing secret of webhook endpoint \(endpointID) does not open under this sealing key: the key file differs from the one that sealed it "
                + "(restore that key file), or the sealed secret was copied from another endpoint's row"
        case .notASecret(let endpointID, let error):
            "the signing secret of webhook endpoint \(endpointID) opened but is not valid: \(error)"
        case .keyFileLength(let path, let count):
            "\(path) must hold exactly \(SecretSealer.keyLength) bytes (it holds \(count)); restore it, or remove it and give every endpoint a new secret"
        case .keyFileUnreadable(let path, let detail):
            "cannot read the webhook secret key file \(path): \(detail)"
        case .keyFileUnwritable(let path, let detail):
            "cannot write the webhook secret key file \(path): \(detail)"
        }
    }
}
