import Foundation
import GatewayPayloads

/// The card data of a decrypted Google Pay `ECv2` token: Google's decrypted
/// message with its `paymentMethodDetails` brought up a level.
///
/// The account number is a card number (or a device token with
/// `CRYPTOGRAM_3DS`): only the adapter that asked for the decryption may see
/// it. Everything else sees ``maskedAccountNumber``: the description, the
/// mirror (`dump`, test failure output) and ``jsonValue(revealingAccountNumber:)``
/// unless told otherwise.
public struct GooglePayPaymentData: Sendable, Hashable {
    /// Google's id of this message.
    public var messageId: String
    /// After this instant the message is refused as expired.
    public var messageExpiration: Date
    /// `CARD`, the only method `ECv2` carries.
    public var paymentMethod: String
    /// The primary account number (`PAN_ONLY`) or the device token
    /// (`CRYPTOGRAM_3DS`). Never log it, store it or put it in an error.
    public var pan: String
    /// 1 to 12.
    public var expirationMonth: Int
    /// Four digits.
    public var expirationYear: Int
    /// `PAN_ONLY` or `CRYPTOGRAM_3DS`.
    public var authMethod: String
    /// The 3-D Secure cryptogram, present with `CRYPTOGRAM_3DS`. Single use;
    /// revealed only with the account number.
    public var cryptogram: String?
    public var eciIndicator: String?
    /// The merchant id at the gateway, present in gateway integrations only.
    public var gatewayMerchantId: String?

    public init(messageId: String, messageExpiration: Date, paymentMethod: String, pan: String,
                expirationMonth: Int, expirationYear: Int, authMethod: String, cryptogram: String? = nil,
                eciIndicator: String? = nil, gatewayMerchantId: String? = nil) {
        self.messageId = messageId
        self.messageExpiration = messageExpiration
        self.paymentMethod = paymentMethod
        self.pan = pan
        self.expirationMonth = expirationMonth
        self.expirationYear = expirationYear
        self.authMethod = authMethod
        self.cryptogram = cryptogram
        self.eciIndicator = eciIndicator
        self.gatewayMerchantId = gatewayMerchantId
    }

    /// The account number with all but its last four digits replaced by `*`.
    public var maskedAccountNumber: String { WalletMask.accountNumber(pan) }

    /// Google's decrypted-message shape (`messageExpiration` as a string of
    /// milliseconds, the card under `paymentMethodDetails`), for an adapter
    /// or a client. Unless `revealingAccountNumber`, `pan` holds
    /// ``maskedAccountNumber`` and the single-use `cryptogram` is left out.
    public func jsonValue(revealingAccountNumber: Bool) -> JSONValue {
        var details: [String: JSONValue] = [
            "pan": .string(revealingAccountNumber ? pan : maskedAccountNumber),
            "expirationMonth": .integer(Int64(expirationMonth)),
            "expirationYear": .integer(Int64(expirationYear)),
            "authMethod": .string(authMethod),
        ]
        if revealingAccountNumber, let cryptogram { details["cryptogram"] = .string(cryptogram) }
        if let eciIndicator { details["eciIndicator"] = .string(eciIndicator) }
        var message: [String: JSONValue] = [
            "messageId": .string(messageId),
            "messageExpiration": .string(GooglePayJSONObject.millisecondsSinceEpoch(messageExpiration)),
            "paymentMethod": .string(paymentMethod),
            "paymentMethodDetails": .object(details),
        ]
        if let gatewayMerchantId { message["gatewayMerchantId"] = .string(gatewayMerchantId) }
        return .object(message)
    }
}

extension GooglePayPaymentData: CustomStringConvertible, CustomReflectable {
    /// The payment data with the account number masked and the cryptogram only said to be present.
    public var description: String {
        var parts = ["messageId: \(messageId)", "messageExpiration: \(WalletTokenError.iso(messageExpiration))",
                     "paymentMethod: \(paymentMethod)", "pan: \(maskedAccountNumber)",
                     "expiry: \(expirationMonth)/\(expirationYear)", "authMethod: \(authMethod)"]
        if cryptogram != nil { parts.append("cryptogram: present") }
        if let eciIndicator { parts.append("eciIndicator: \(eciIndicator)") }
        if let gatewayMerchantId { parts.append("gatewayMerchantId: \(gatewayMerchantId)") }
        return "GooglePayPaymentData(\(parts.joined(separator: ", ")))"
    }

    /// The same masking for `dump` and for anything else that reflects.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "messageId": messageId, "messageExpiration": messageExpiration, "paymentMethod": paymentMethod,
            "pan": maskedAccountNumber, "expirationMonth": expirationMonth, "expirationYear": expirationYear,
            "authMethod": authMethod, "cryptogram": cryptogram == nil ? "absent" : "present",
            "eciIndicator": eciIndicator as Any, "gatewayMerchantId": gatewayMerchantId as Any,
        ], displayStyle: .struct)
    }
}

extension GooglePayPaymentData {
    /// Reads Google's decrypted message, checking `messageExpiration` first:
    /// it is required (Google's steps make the check mandatory, though Tink
    /// skips it when absent), and the message is expired when it is at or
    /// before `now`. Refusals name the member, never its value.
    init(plaintext: Data, now: Date) throws(WalletTokenError) {
        let message = try GooglePayJSONObject(parsing: plaintext, named: "the decrypted message", at: "", in: .paymentData)
        let expiration = try message.milliseconds("messageExpiration")
        guard now < expiration else {
            throw .expired("the message expired at \(WalletTokenError.iso(expiration)) (now is \(WalletTokenError.iso(now)))")
        }
        let paymentMethod = try message.string("paymentMethod")
        guard paymentMethod == "CARD" else {
            throw message.refusal("paymentMethod is \(String(paymentMethod.prefix(20))), not CARD, the only method of ECv2")
        }
        let details = try message.object("paymentMethodDetails")
        let pan = try details.string("pan")
        guard (12...19).contains(pan.utf8.count), pan.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw details.refusal("paymentMethodDetails.pan is not 12 to 19 digits")
        }
        let authMethod = try details.string("authMethod")
        let cryptogram = try details.optionalString("cryptogram")
        if authMethod == "CRYPTOGRAM_3DS" && cryptogram == nil {
            throw details.refusal("paymentMethodDetails.cryptogram is missing, and authMethod is CRYPTOGRAM_3DS")
        }
        let messageId = try message.string("messageId")
        let expirationMonth = try details.integer("expirationMonth", in: 1...12)
        let expirationYear = try details.integer("expirationYear", in: 1000...9999)
        let eciIndicator = try details.optionalString("eciIndicator")
        let gatewayMerchantId = try message.optionalString("gatewayMerchantId")
        self.init(messageId: messageId, messageExpiration: expiration, paymentMethod: paymentMethod, pan: pan,
                  expirationMonth: expirationMonth, expirationYear: expirationYear, authMethod: authMethod,
                  cryptogram: cryptogram, eciIndicator: eciIndicator, gatewayMerchantId: gatewayMerchantId)
    }
}
