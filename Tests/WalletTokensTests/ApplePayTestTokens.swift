import Crypto
import Foundation
import SwiftASN1
@_spi(CMS) import X509
@testable import WalletTokens

/// A test PKI shaped like Apple's (root, intermediate with its marker, leaf
/// with its marker, a merchant certificate naming its identifier) and tokens
/// made under it in Swift, each part changeable so a test can break exactly
/// one thing. The independent producer is `scripts/applepay-test-token`
/// (the recorded fixture); this one makes the broken variants.
struct ApplePayTestPKI {
    var rootKey = P384.Signing.PrivateKey()
    var intermediateKey = P256.Signing.PrivateKey()
    var leafKey = P256.Signing.PrivateKey()
    var merchantKey = P256.KeyAgreement.PrivateKey()
    var merchantID = "merchant.com.example.swift-test"
    var leafMarker = true
    var intermediateMarker = true
    /// When the intermediate stops being valid (its start is a year before).
    var intermediateNotAfter = Date().addingTimeInterval(365 * 86_400)

    static let epoch = Date()

    func name(_ common: String) throws -> DistinguishedName {
        try DistinguishedName { CommonName(common); OrganizationName("Gateway Swift Test PKI (not Apple)") }
    }

    var root: Certificate {
        get throws {
            let key = Certificate.PrivateKey(rootKey)
            return try Certificate(version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: Self.epoch - 86_400 * 365,
                                   notValidAfter: Self.epoch + 86_400 * 3650, issuer: try name("Swift Test Root"), subject: try name("Swift Test Root"),
                                   signatureAlgorithm: .ecdsaWithSHA384, extensions: try Self.caExtensions([]), issuerPrivateKey: key)
        }
    }

    var intermediate: Certificate {
        get throws {
            try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: Self.epoch - 86_400 * 365,
                            notValidAfter: intermediateNotAfter, issuer: try name("Swift Test Root"), subject: try name("Swift Test Integration CA"),
                            signatureAlgorithm: .ecdsaWithSHA384,
                            extensions: try Self.caExtensions(intermediateMarker ? [Self.marker(ApplePayDecryptor.intermediateMarker)] : []),
                            issuerPrivateKey: .init(rootKey))
        }
    }

    var leaf: Certificate {
        get throws {
            try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: Self.epoch - 86_400 * 30,
                            notValidAfter: Self.epoch + 86_400 * 365, issuer: try name("Swift Test Integration CA"), subject: try name("Swift Test Broker Sign"),
                            signatureAlgorithm: .ecdsaWithSHA256,
                            extensions: try Certificate.Extensions(leafMarker ? [Self.marker(ApplePayDecryptor.leafMarker)] : []),
                            issuerPrivateKey: .init(intermediateKey))
        }
    }

    /// The merchant's certificate (PEM), naming SHA-256(merchantID) in hex.
    var merchantCertificatePEM: String {
        get throws {
            let signingView = try P256.Signing.PublicKey(rawRepresentation: merchantKey.publicKey.rawRepresentation)
            let hex = SHA256.hash(data: Data(merchantID.utf8)).map { String(format: "%02X", $0) }.joined()
            var serializer = DER.Serializer()
            try serializer.serialize(ASN1UTF8String(hex))
            let identifier = Certificate.Extension(oid: ApplePayMerchant.merchantIdentifierOID, critical: false, value: serializer.serializedBytes[...])
            let certificate = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(signingView), notValidBefore: Self.epoch - 86_400,
                                              notValidAfter: Self.epoch + 86_400 * 365, issuer: try name("Swift Test Integration CA"),
                                              subject: try name("Merchant ID: " + merchantID), signatureAlgorithm: .ecdsaWithSHA256,
                                              extensions: try Certificate.Extensions([identifier]), issuerPrivateKey: .init(intermediateKey))
            return try certificate.serializeAsPEM().pemString
        }
    }

    var merchant: ApplePayMerchant { get throws { try ApplePayMerchant(certificatePEM: try merchantCertificatePEM, privateKeyPEM: merchantKey.pemRepresentation) } }

    static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    static func caExtensions(_ extra: [Certificate.Extension]) throws -> Certificate.Extensions {
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true))
        }
        for item in extra { try extensions.append(item) }
        return extensions
    }

    /// A token of `plaintext` for `encryptFor` (this PKI's merchant key unless
    /// another), signed by this PKI's leaf at `signedAt`.
    func token(plaintext: [String: Any] = ApplePayTestPKI.paymentData, signedAt: Date = Date(), encryptFor: P256.KeyAgreement.PublicKey? = nil,
               applicationData: [UInt8]? = nil) throws -> ApplePayToken {
        let recipient = encryptFor ?? merchantKey.publicKey
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let shared = try ephemeral.sharedSecretFromKeyAgreement(with: recipient)
        var hash = SHA256()
        hash.update(data: [0, 0, 0, 1])
        shared.withUnsafeBytes { hash.update(bufferPointer: $0) }
        hash.update(data: [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8) + Array(SHA256.hash(data: Data(merchantID.utf8))))
        let sealed = try AES.GCM.seal(try JSONSerialization.data(withJSONObject: plaintext), using: SymmetricKey(data: hash.finalize()),
                                      nonce: try AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 16)))
        let recipientSPKI = try P256.Signing.PublicKey(rawRepresentation: recipient.rawRepresentation).derRepresentation
        var token = ApplePayToken(version: "EC_v1", data: Array(sealed.ciphertext) + Array(sealed.tag), signature: [],
                                  ephemeralPublicKey: Array(ephemeral.publicKey.derRepresentation),
                                  publicKeyHash: Array(SHA256.hash(data: recipientSPKI)),
                                  transactionID: (0..<32).map { _ in UInt8.random(in: 0...255) }, applicationData: applicationData)
        token.signature = try sign(token.signedContent, at: signedAt)
        return token
    }

    func sign(_ content: [UInt8], at signedAt: Date) throws -> [UInt8] {
        try CMS.sign(content, signatureAlgorithm: .ecdsaWithSHA256, additionalIntermediateCertificates: [try intermediate],
                     certificate: try leaf, privateKey: .init(leafKey), signingTime: signedAt, detached: true)
    }

    static var paymentData: [String: Any] { [
        "applicationPrimaryAccountNumber": "5204245250001488", "applicationExpirationDate": "310630", "currencyCode": "682",
        "transactionAmount": 12_345, "deviceManufacturerIdentifier": "040010030273", "paymentDataType": "3DSecure",
        "paymentData": ["onlinePaymentCryptogram": "AOEB0bsAAAAAAAAAAAAAAAAAAAA=", "eciIndicator": "5"],
    ] }
}

extension ApplePayToken {
    /// The token as a device hands it over (`PKPaymentToken.paymentData`).
    var json: Data {
        var header: [String: Any] = ["ephemeralPublicKey": Data(ephemeralPublicKey).base64EncodedString(),
                                     "publicKeyHash": Data(publicKeyHash).base64EncodedString(),
                                     "transactionId": transactionID.map { String(format: "%02x", $0) }.joined()]
        if let applicationData { header["applicationData"] = applicationData.map { String(format: "%02x", $0) }.joined() }
        return try! JSONSerialization.data(withJSONObject: ["version": version, "data": Data(data).base64EncodedString(),
                                                            "signature": Data(signature).base64EncodedString(), "header": header])
    }
}
