import Foundation
import GatewayPayloads

/// What an Apple Pay token decrypts to (Apple's "payment data keys"). The
/// account number is the device's (a DPAN): whoever receives this value
/// other than the adapter that asked gets it masked
/// (``jsonValue(revealingAccountNumber:)``), and ``description`` masks it.
public struct ApplePayPaymentData: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    public var accountNumber: String
    /// `YYMMDD`.
    public var expirationDate: String
    /// ISO 4217 numeric code, e.g. `682`.
    public var currencyCode: String
    /// In the currency's minor units.
    public var transactionAmount: Int64
    public var cardholderName: String?
    public var deviceManufacturerIdentifier: String
    /// `3DSecure` or `EMV`.
    public var paymentDataType: String
    public var onlinePaymentCryptogram: String?
    public var eciIndicator: String?
    public var emvData: String?
    public var merchantTokenIdentifier: String?

    /// The account number with all but its last four digits masked.
    public var maskedAccountNumber: String { WalletMask.accountNumber(accountNumber) }

    public var description: String {
        "ApplePayPaymentData(\(maskedAccountNumber), expires \(expirationDate), \(transactionAmount) in \(currencyCode), \(paymentDataType))"
    }

    /// The same masking for `dump`, a debugger and a failed expectation's
    /// output: the number masked, the cryptogram and EMV data only said present.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "accountNumber": maskedAccountNumber, "expirationDate": expirationDate, "currencyCode": currencyCode,
            "transactionAmount": transactionAmount, "cardholderName": cardholderName as Any,
            "deviceManufacturerIdentifier": deviceManufacturerIdentifier, "paymentDataType": paymentDataType,
            "onlinePaymentCryptogram": onlinePaymentCryptogram == nil ? "absent" : "present", "eciIndicator": eciIndicator as Any,
            "emvData": emvData == nil ? "absent" : "present", "merchantTokenIdentifier": merchantTokenIdentifier as Any,
        ], displayStyle: .struct)
    }

    init(json bytes: [UInt8]) throws(WalletTokenError) {
        let parsed: JSONValue? = bytes.withUnsafeBytes { buffer in try? JSONValue(jsonBytes: buffer) }
        guard let object = parsed?.objectValue else {
            throw .malformedPaymentData("not a JSON object")
        }
        func string(_ key: String) throws(WalletTokenError) -> String {
            guard let value = object[key]?.stringValue, !value.isEmpty else { throw .malformedPaymentData("\(key) is missing or not a string") }
            return value
        }
        accountNumber = try string("applicationPrimaryAccountNumber")
        guard (12...19).contains(accountNumber.utf8.count), accountNumber.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .malformedPaymentData("applicationPrimaryAccountNumber is not 12 to 19 digits")
        }
        expirationDate = try string("applicationExpirationDate")
        guard expirationDate.utf8.count == 6, expirationDate.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .malformedPaymentData("applicationExpirationDate is not YYMMDD")
        }
        currencyCode = try string("currencyCode")
        guard currencyCode.utf8.count == 3, currencyCode.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .malformedPaymentData("currencyCode is not an ISO 4217 numeric code")
        }
        // Minor units, written as a whole number (`2500`): one with a fraction or an exponent is refused.
        guard let exact = object["transactionAmount"]?.integerValue, exact >= 0 else {
            throw .malformedPaymentData("transactionAmount is not a whole number of minor units")
        }
        transactionAmount = exact
        cardholderName = object["cardholderName"]?.stringValue
        deviceManufacturerIdentifier = try string("deviceManufacturerIdentifier")
        paymentDataType = try string("paymentDataType")
        guard let details = object["paymentData"]?.objectValue else { throw .malformedPaymentData("paymentData is missing") }
        switch paymentDataType {
        case "3DSecure":
            guard let cryptogram = details["onlinePaymentCryptogram"]?.stringValue, !cryptogram.isEmpty else {
                throw .malformedPaymentData("paymentData.onlinePaymentCryptogram is missing")
            }
            onlinePaymentCryptogram = cryptogram
            eciIndicator = details["eciIndicator"]?.stringValue
        case "EMV":
            guard let emv = details["emvData"]?.stringValue, !emv.isEmpty else { throw .malformedPaymentData("paymentData.emvData is missing") }
            emvData = emv
        default:
            throw .malformedPaymentData("paymentDataType is neither 3DSecure nor EMV")
        }
        merchantTokenIdentifier = object["merchantTokenIdentifier"]?.stringValue
    }

    /// As JSON, in Apple's names; unless `revealingAccountNumber` (for the
    /// adapter that asked, and no one else) the account number is masked and
    /// the single-use cryptogram and EMV data are left out.
    public func jsonValue(revealingAccountNumber: Bool) -> JSONValue {
        var details: [String: JSONValue] = [:]
        if revealingAccountNumber, let onlinePaymentCryptogram { details["onlinePaymentCryptogram"] = .string(onlinePaymentCryptogram) }
        if let eciIndicator { details["eciIndicator"] = .string(eciIndicator) }
        if revealingAccountNumber, let emvData { details["emvData"] = .string(emvData) }
        var object: [String: JSONValue] = [
            "applicationPrimaryAccountNumber": .string(revealingAccountNumber ? accountNumber : maskedAccountNumber),
            "applicationExpirationDate": .string(expirationDate),
            "currencyCode": .string(currencyCode),
            "transactionAmount": .integer(Int64(transactionAmount)),
            "deviceManufacturerIdentifier": .string(deviceManufacturerIdentifier),
            "paymentDataType": .string(paymentDataType),
            "paymentData": .object(details),
        ]
        if let cardholderName { object["cardholderName"] = .string(cardholderName) }
        if let merchantTokenIdentifier { object["merchantTokenIdentifier"] = .string(merchantTokenIdentifier) }
        return .object(object)
    }
}

/// How wallet modules mask an account number: every digit but the last four.
public enum WalletMask {
    public static func accountNumber(_ number: String) -> String {
        String(repeating: "*", count: max(0, number.count - 4)) + number.suffix(4)
    }
}
