import Crypto
import Foundation

/// Verifies and decrypts Google Pay `ECv2` tokens for a merchant that holds
/// its own key (the direct integration, without a `PAYMENT_GATEWAY`
/// tokenization), in the order of Google's reference, Tink's
/// `PaymentMethodTokenRecipient`:
///
/// 1. the token's shape, and its protocol version `ECv2`
///    (``WalletTokenError/unsupportedVersion(_:)``, ``WalletTokenError/malformedToken(_:)``);
/// 2. the trusted roots: the given root keys of version `ECv2` whose expiration
///    lies after `now` (none: ``WalletTokenError/wrongChain(_:)``);
/// 3. one of the intermediate key's signatures verifying under one of those
///    roots (else ``WalletTokenError/wrongChain(_:)``);
/// 4. the intermediate key's `keyExpiration` after `now` (else ``WalletTokenError/expired(_:)``);
/// 5. the message signature under the intermediate key, over the recipient id
///    and the exact `signedMessage` (else ``WalletTokenError/badSignature(_:)``):
///    any change to the ciphertext, the ephemeral key or the tag fails here;
/// 6. decryption with each merchant key in turn, the tag checked before
///    anything is decrypted; no key whose tag verifies is
///    ``WalletTokenError/wrongMerchantKey(_:)``. A message Google signed
///    with a tag that verifies under no key is reported the same way: after
///    a good signature, a tag that fails means the token was not encrypted
///    for these keys;
/// 7. the decrypted message's `messageExpiration`, required and after `now`
///    (else ``WalletTokenError/expired(_:)``), then its card data
///    (``WalletTokenError/malformedPaymentData(_:)``).
///
/// Expired means at or before `now`, which the caller passes so that a
/// recorded token can be replayed at its own time.
public struct GooglePayDecryptor: Sendable {
    /// Google's root signing keys, as read from its keys.json; the ones
    /// not fit for `ECv2` at "now" are ignored.
    public var rootKeys: [GooglePaySigningKey]
    /// `merchant:<merchant id>`: the merchant id of the Google Pay & Wallet
    /// Console, which the message signature covers.
    public var recipientId: String
    /// The merchant's private keys, tried in order (more than one while a
    /// key is being rotated).
    public var merchantKeys: [P256.KeyAgreement.PrivateKey]

    public init(rootKeys: [GooglePaySigningKey], recipientId: String, merchantKeys: [P256.KeyAgreement.PrivateKey]) {
        self.rootKeys = rootKeys
        self.recipientId = recipientId
        self.merchantKeys = merchantKeys
    }

    /// The token's card data, or the first check it fails.
    /// - Parameters:
    ///   - token: the token JSON, as the payer's device handed it over
    ///     (`paymentMethodData.tokenizationData.token`).
    ///   - now: the instant the expirations are checked against.
    public func decrypt(_ token: Data, now: Date) throws(WalletTokenError) -> GooglePayPaymentData {
        guard !recipientId.isEmpty else { throw .merchantIdentity("no recipient id (merchant:<merchant id>) was given") }
        guard !merchantKeys.isEmpty else { throw .merchantIdentity("no merchant private key was given") }
        let parsed = try GooglePayToken(json: token)
        let intermediate = try verifiedIntermediateKey(of: parsed, now: now)
        try verifyMessageSignature(of: parsed, with: intermediate)
        let message = try GooglePaySignedMessage(signedMessage: parsed.signedMessage)
        for merchantKey in merchantKeys {
            if case .plaintext(let plaintext) = try GooglePayECIES.open(message, with: merchantKey) {
                return try GooglePayPaymentData(plaintext: plaintext, now: now)
            }
        }
        throw .wrongMerchantKey("signedMessage.tag verifies under none of the \(merchantKeys.count) merchant key(s) given")
    }

    /// Steps 2 to 4: the intermediate key, once a trusted root has signed it and if it has not expired.
    func verifiedIntermediateKey(of token: GooglePayToken, now: Date) throws(WalletTokenError) -> GooglePayIntermediateKey {
        let trusted = rootKeys.filter { root in
            root.protocolVersion == GooglePayToken.protocolVersion && root.expiration.map { now < $0 } == true
        }
        guard !trusted.isEmpty else {
            throw .wrongChain("none of the \(rootKeys.count) root signing key(s) is an ECv2 key unexpired at \(WalletTokenError.iso(now))")
        }
        let signedBytes = token.intermediateSignedBytes
        // A signature that is not DER verifies under no key, as in Tink: another one may still.
        let signatures = token.intermediateSignatures.compactMap { try? P256.Signing.ECDSASignature(derRepresentation: $0) }
        let signed = signatures.contains { signature in
            trusted.contains { root in root.key.isValidSignature(signature, for: signedBytes) }
        }
        guard signed else {
            throw .wrongChain("no signature of intermediateSigningKey.signedKey verifies under the \(trusted.count) trusted ECv2 root key(s)")
        }
        let intermediate = try GooglePayIntermediateKey(signedKey: token.signedKey)
        guard now < intermediate.expiration else {
            throw .expired("the intermediate signing key expired at \(WalletTokenError.iso(intermediate.expiration)) (now is \(WalletTokenError.iso(now)))")
        }
        return intermediate
    }

    /// Step 5: the intermediate key signed this message for this recipient.
    func verifyMessageSignature(of token: GooglePayToken, with intermediate: GooglePayIntermediateKey) throws(WalletTokenError) {
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: token.signature) else {
            throw .badSignature("signature is not a DER ECDSA signature")
        }
        guard intermediate.key.isValidSignature(signature, for: token.messageSignedBytes(recipientId: recipientId)) else {
            throw .badSignature("signature does not verify over signedMessage for \(recipientId) under the intermediate signing key")
        }
    }
}
