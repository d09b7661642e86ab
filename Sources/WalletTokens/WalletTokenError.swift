import Foundation

/// Why a wallet payment token (Apple Pay `EC_v1`, Google Pay `ECv2`) was
/// refused. Every refusal is one of these, with what was wrong and where,
/// and never a value of the token's payment data.
public enum WalletTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a token of the expected shape: what is wrong, and where.
    case malformedToken(String)
    /// A protocol version this module does not decrypt.
    case unsupportedVersion(String)
    /// A signature does not verify under the key that should have made it.
    case badSignature(String)
    /// The signed content does not match the token: its data, key or ids were changed after signing.
    case tamperedData(String)
    /// The signer does not chain to a trusted root, or is not a certificate
    /// or key of the wallet's (Apple's marker OIDs; Google's signing keys).
    case wrongChain(String)
    /// Apple Pay: the signing time lies further from "now" than the window allows.
    case signingTimeOutsideWindow(signedAt: Date, now: Date, window: TimeInterval)
    /// Google Pay: the intermediate signing key or the message has expired.
    case expired(String)
    /// The token was encrypted for another merchant key than the one given.
    case wrongMerchantKey(String)
    /// The merchant's own certificate or key cannot be used (they do not
    /// match, the certificate names no merchant identifier, ...).
    case merchantIdentity(String)
    /// Authenticated decryption refused the ciphertext.
    case decryptionFailed(String)
    /// The decrypted payment data is not what the wallet documents.
    case malformedPaymentData(String)

    /// A stable code for each case, for logs, JSON answers and tests.
    public var code: String {
        switch self {
        case .malformedToken: "malformed_token"
        case .unsupportedVersion: "unsupported_version"
        case .badSignature: "bad_signature"
        case .tamperedData: "tampered_data"
        case .wrongChain: "wrong_chain"
        case .signingTimeOutsideWindow: "signing_time_outside_window"
        case .expired: "expired"
        case .wrongMerchantKey: "wrong_merchant_key"
        case .merchantIdentity: "merchant_identity"
        case .decryptionFailed: "decryption_failed"
        case .malformedPaymentData: "malformed_payment_data"
        }
    }

    public var description: String {
        switch self {
        case .malformedToken(let why): "malformed token: \(why)"
        case .unsupportedVersion(let version): "unsupported token version \(version)"
        case .badSignature(let why): "bad signature: \(why)"
        case .tamperedData(let why): "tampered data: \(why)"
        case .wrongChain(let why): "wrong chain: \(why)"
        case .signingTimeOutsideWindow(let signedAt, let now, let window):
            "signing time \(Self.iso(signedAt)) is more than \(Int(window)) s from now (\(Self.iso(now)))"
        case .expired(let what): "expired: \(what)"
        case .wrongMerchantKey(let why): "wrong merchant key: \(why)"
        case .merchantIdentity(let why): "merchant identity: \(why)"
        case .decryptionFailed(let why): "decryption failed: \(why)"
        case .malformedPaymentData(let why): "malformed payment data: \(why)"
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!))
    }
}
