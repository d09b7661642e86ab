import Foundation

/// What a payer's device does with Worldline's client SDK before the
/// merchant's server creates a payment: it fetches the public key
/// (`GET crypto/publickey` with the client session), puts the card fields in
/// the payload the SDKs encrypt, and seals it as a compact JWE
/// (``WorldlineJWE``). The merchant only ever sees the JWE, which it sends
/// as `encryptedCustomerInput`.
///
/// The payload, as Worldline's JavaScript and Swift client SDKs write it:
///
///     {"clientSessionId": …, "nonce": <32 hex digits>, "paymentProductId": 1,
///      "paymentValues": [{"key": "cardNumber", "value": …},
///                        {"key": "expiryDate", "value": "MMYY"},
///                        {"key": "cvv", "value": …},
///                        {"key": "cardholderName", "value": …}]}
///
/// (the JavaScript SDK also adds `collectedDeviceInformation`, which the
/// simulator does not read). Used by tests and by the sandbox's scripted
/// checkouts; a real device runs Worldline's SDK.
public enum WorldlineDevice {
    /// The `encryptedCustomerInput` for one card: the payload above,
    /// encrypted to `publicKey` (base64 DER SubjectPublicKeyInfo) under
    /// `keyId`. `nonce` defaults to 16 fresh random bytes in hex, as the SDKs
    /// make it; give one to replay it. `cvv` and `cardholderName` are left
    /// out of the payload when nil.
    public static func encryptedCustomerInput(publicKey: String, keyId: String, clientSessionId: String, paymentProductId: Int,
                                              cardNumber: String, expiryDate: String, cvv: String?, cardholderName: String?,
                                              nonce: String? = nil) throws -> String {
        var values: [[String: String]] = [["key": "cardNumber", "value": cardNumber], ["key": "expiryDate", "value": expiryDate]]
        if let cvv { values.append(["key": "cvv", "value": cvv]) }
        if let cardholderName { values.append(["key": "cardholderName", "value": cardholderName]) }
        let payload: [String: Any] = [
            "clientSessionId": clientSessionId,
            "nonce": nonce ?? WorldlineJWE.randomBytes(16).map { String(format: "%02x", $0) }.joined(),
            "paymentProductId": paymentProductId,
            "paymentValues": values,
        ]
        return try WorldlineJWE.encrypt(Array(SimulatorJSON.text(payload).utf8), publicKey: publicKey, keyId: keyId)
    }
}
