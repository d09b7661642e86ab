import Crypto
import Foundation
import GatewayPayloads

/// One of Google's root signing keys: the keys that sign the intermediate
/// signing key of every Google Pay token.
///
/// Google publishes them in a keys.json (production
/// `https://payments.developers.google.com/paymentmethodtoken/keys.json`,
/// test `https://payments.developers.google.com/paymentmethodtoken/test/keys.json`),
/// which the operator saves to a file and refreshes; the host does not fetch
/// it. A ``GooglePayDecryptor`` trusts only the keys whose protocol version is
/// `ECv2` and whose expiration lies after "now".
public struct GooglePaySigningKey: Sendable {
    public var key: P256.Signing.PublicKey
    /// `ECv1`, `ECv2` or `ECv2SigningOnly`: the protocol the key signs for.
    public var protocolVersion: String
    /// nil when the file gives none (Google's ECv1 keys); such a key is never
    /// trusted for ECv2.
    public var expiration: Date?

    public init(key: P256.Signing.PublicKey, protocolVersion: String, expiration: Date?) {
        self.key = key
        self.protocolVersion = protocolVersion
        self.expiration = expiration
    }

    /// Reads Google's keys.json:
    /// `{"keys":[{"keyValue": base64 SubjectPublicKeyInfo, "protocolVersion": "ECv2", "keyExpiration": "ms"}, ...]}`.
    /// Every key of the file is returned, whatever its version or expiration;
    /// a key that cannot be read refuses the whole file, so that a damaged
    /// file is noticed rather than silently trusted in part.
    public static func keys(fromJSON data: Data) throws(WalletTokenError) -> [GooglePaySigningKey] {
        let file = try GooglePayJSONObject(parsing: data, named: "the keys file", at: "", in: .rootKeys)
        let entries = try file.array("keys")
        guard !entries.isEmpty else { throw file.refusal("keys is empty") }
        var keys: [GooglePaySigningKey] = []
        for (index, entry) in entries.enumerated() {
            let member = try GooglePayJSONObject(entry, at: "keys[\(index)]", in: .rootKeys)
            let der = try member.base64("keyValue")
            guard let key = try? P256.Signing.PublicKey(derRepresentation: der) else {
                throw member.refusal("\(member.name("keyValue")) is not a P-256 SubjectPublicKeyInfo")
            }
            let protocolVersion = try member.string("protocolVersion")
            var expiration: Date?
            if member.members["keyExpiration"] != nil {
                expiration = try member.milliseconds("keyExpiration")
            }
            keys.append(GooglePaySigningKey(key: key, protocolVersion: protocolVersion, expiration: expiration))
        }
        return keys
    }
}
