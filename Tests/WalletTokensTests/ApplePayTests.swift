import Crypto
import Foundation
import GatewayPayloads
import Testing
@_spi(CMS) import X509
@testable import WalletTokens

/// Apple Pay `EC_v1`: a token made by an independent producer decrypts; each
/// thing that can be wrong with a token or a merchant identity is refused
/// with its own typed error; the account number is masked wherever it goes
/// but to the caller that asked for it revealed.
@Suite("Apple Pay tokens")
struct ApplePayTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/applepay")

    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
    }

    static var recorded: (token: ApplePayToken, merchant: ApplePayMerchant, root: Certificate, signedAt: Date) {
        get throws {
            let token = try ApplePayToken(json: Data(try fixture("token.json").utf8))
            let merchant = try ApplePayMerchant(certificatePEM: try fixture("merchant-certificate.pem"), privateKeyPEM: try fixture("merchant-key.pem"))
            let root = try Certificate(pemEncoded: try fixture("root.pem"))
            let at = try #require(ISO8601DateFormatter().date(from: try fixture("signed-at.txt").trimmingCharacters(in: .whitespacesAndNewlines)))
            return (token, merchant, root, at)
        }
    }

    @Test func theEmbeddedRootIsAppleRootCAG3ByItsFingerprint() throws {
        let der = try AppleRootCA.g3.serializeAsPEM().derBytes
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
        #expect(AppleRootCA.g3.subject.description.contains("Apple Root CA - G3"))
        #expect(ApplePayDecryptor().trustRoots == [AppleRootCA.g3])
    }

    /// The producer is `scripts/applepay-test-token` (Python), written apart
    /// from this module: BER with indefinite lengths, a digest algorithm with
    /// NULL parameters, extra signed attributes and application data, as
    /// Apple's own tokens have. Replayed at its signing time (`--at`).
    @Test func aRecordedTokenFromAnIndependentProducerDecryptsAtItsSigningTime() async throws {
        let (token, merchant, root, signedAt) = try Self.recorded
        #expect(token.applicationData != nil)
        let data = try await ApplePayDecryptor(trustRoots: [root]).decrypt(token, for: merchant, now: signedAt.addingTimeInterval(60))
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(try Self.fixture("expected.json").utf8)) as? [String: Any])
        #expect(data.accountNumber == expected["applicationPrimaryAccountNumber"] as? String)
        #expect(data.transactionAmount == 2500 && data.currencyCode == "682" && data.expirationDate == "301231" && data.paymentDataType == "3DSecure")
        #expect(data.onlinePaymentCryptogram == (expected["paymentData"] as? [String: Any])?["onlinePaymentCryptogram"] as? String)
        #expect(data.cardholderName == "Lina Al-Harbi" && data.eciIndicator == "7")
    }

    @Test func theSameTokenAMinuteOutsideTheWindowIsRefusedWithBothTimes() async throws {
        let (token, merchant, root, signedAt) = try Self.recorded
        for now in [signedAt.addingTimeInterval(301), signedAt.addingTimeInterval(-301)] {
            await #expect(throws: WalletTokenError.signingTimeOutsideWindow(signedAt: signedAt, now: now, window: 300)) {
                _ = try await ApplePayDecryptor(trustRoots: [root]).decrypt(token, for: merchant, now: now)
            }
        }
        let wider = ApplePayDecryptor(trustRoots: [root], signingTimeWindow: 3600)
        _ = try await wider.decrypt(token, for: merchant, now: signedAt.addingTimeInterval(1800))
    }

    @Test func underApplesOwnRootATestTokenIsTheWrongChain() async throws {
        let (token, merchant, _, signedAt) = try Self.recorded
        let error = await #expect(throws: WalletTokenError.self) { _ = try await ApplePayDecryptor().decrypt(token, for: merchant, now: signedAt) }
        #expect(error?.code == "wrong_chain", "\(String(describing: error))")
    }

    @Test func aSwiftMadeTokenDecryptsToItsPaymentData() async throws {
        let pki = ApplePayTestPKI()
        let now = Date()
        let token = try pki.token(signedAt: now, applicationData: Array(SHA256.hash(data: Data("o-1".utf8))))
        let reread = try ApplePayToken(json: token.json)
        let data = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(reread, for: try pki.merchant, now: now)
        #expect(data.accountNumber == "5204245250001488" && data.transactionAmount == 12_345 && data.eciIndicator == "5")
    }

    /// Every byte the signature covers: the data, the ephemeral key, the
    /// transaction id, the application data.
    @Test(arguments: ["data", "ephemeralPublicKey", "transactionID", "applicationData"])
    func changingAnySignedPartIsTamperedData(part: String) async throws {
        let pki = ApplePayTestPKI()
        var token = try pki.token(applicationData: [1, 2, 3])
        switch part {
        case "data": token.data[3] ^= 0x01
        case "ephemeralPublicKey": token.ephemeralPublicKey = Array(P256.KeyAgreement.PrivateKey().publicKey.derRepresentation)
        case "transactionID": token.transactionID[0] ^= 0x80
        default: token.applicationData = [1, 2, 4]
        }
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "tampered_data", "\(String(describing: error))")
    }

    /// The signed attributes changed after signing (here the signing time
    /// pushed one second): the digest still matches, the signature does not.
    @Test func aSignatureThatDoesNotVerifyUnderTheSignerIsABadSignature() async throws {
        let pki = ApplePayTestPKI()
        var token = try pki.token()
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x05]   // signingTime
        let at = try #require(token.signature.firstRange(of: oid)).upperBound
        let utcTime = try #require(token.signature[at...].firstIndex(of: 0x17))
        let lastDigit = utcTime + 2 + 11   // YYMMDDHHMMSS: the second's units
        token.signature[lastDigit] = token.signature[lastDigit] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: [try pki.root], signingTimeWindow: 3600).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "bad_signature", "\(String(describing: error))")
    }

    @Test(arguments: ["leafMarker", "intermediateMarker", "expiredIntermediate", "otherRoot"])
    func aSignerOutsideApplesChainShapeIsTheWrongChain(broken: String) async throws {
        var pki = ApplePayTestPKI()
        var roots = [try pki.root]
        switch broken {
        case "leafMarker": pki.leafMarker = false
        case "intermediateMarker": pki.intermediateMarker = false
        case "expiredIntermediate": pki.intermediateNotAfter = Date().addingTimeInterval(-60)
        default: roots = [try ApplePayTestPKI().root]
        }
        let token = try pki.token()
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: roots).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "wrong_chain", "\(broken): \(String(describing: error))")
    }

    /// Apple's signature is detached, over signed attributes that carry the
    /// signing time: a CMS with the content attached, or one without signed
    /// attributes (so without a signing time), is not an Apple Pay signature.
    @Test(arguments: ["attached", "noSignedAttributes"])
    func aSignatureNotShapedAsApplesIsRefused(shape: String) async throws {
        let pki = ApplePayTestPKI()
        var token = try pki.token()
        token.signature = try CMS.sign(token.signedContent, signatureAlgorithm: .ecdsaWithSHA256, additionalIntermediateCertificates: [try pki.intermediate],
                                       certificate: try pki.leaf, privateKey: .init(pki.leafKey),
                                       signingTime: shape == "attached" ? Date() : nil, detached: shape != "attached")
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "malformed_token", "\(shape): \(String(describing: error))")
    }

    @Test func aTokenForAnotherMerchantKeyIsTheWrongMerchantKeyAndNothingIsDecrypted() async throws {
        let pki = ApplePayTestPKI()
        let token = try pki.token(encryptFor: P256.KeyAgreement.PrivateKey().publicKey)
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "wrong_merchant_key", "\(String(describing: error))")
    }

    /// The right key under another merchant identifier derives another key:
    /// GCM refuses it.
    @Test func anotherMerchantIdentifierDerivesAKeyGCMRefuses() async throws {
        var pki = ApplePayTestPKI()
        let token = try pki.token()
        pki.merchantID = "merchant.com.example.someone-else"
        let error = await #expect(throws: WalletTokenError.self) {
            _ = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(token, for: try pki.merchant, now: Date())
        }
        #expect(error?.code == "decryption_failed", "\(String(describing: error))")
    }

    @Test func aMerchantKeyThatIsNotTheCertificatesIsRefusedWhenRead() throws {
        let pki = ApplePayTestPKI()
        #expect(throws: WalletTokenError.self) {
            _ = try ApplePayMerchant(certificatePEM: try pki.merchantCertificatePEM, privateKeyPEM: P256.KeyAgreement.PrivateKey().pemRepresentation)
        }
        #expect(throws: WalletTokenError.self) {
            _ = try ApplePayMerchant(certificatePEM: try pki.root.serializeAsPEM().pemString, privateKeyPEM: pki.merchantKey.pemRepresentation)
        }
        let bagged = "Bag Attributes\n    friendlyName: merchant\n" + (try pki.merchantCertificatePEM)
        _ = try ApplePayMerchant(certificatePEM: bagged, privateKeyPEM: pki.merchantKey.pemRepresentation)
    }

    @Test(arguments: [
        (#"{"version":"RSA_v1","data":"AA==","signature":"AA==","header":{}}"#, "unsupported_version"),
        (#"{"paymentData":{"version":"EC_v1","signature":"AA==","header":{}}}"#, "malformed_token"),
        (#"{"version":"EC_v1","data":"not base64!","signature":"AA==","header":{}}"#, "malformed_token"),
        ("[]", "malformed_token"),
        ("{", "malformed_token"),
    ])
    func aMalformedTokenSaysWhatIsWrongAndWhere(json: String, code: String) {
        let error = #expect(throws: WalletTokenError.self) { _ = try ApplePayToken(json: Data(json.utf8)) }
        #expect(error?.code == code, "\(String(describing: error))")
    }

    /// The signed content joins its parts without lengths: moving 16 bytes of
    /// the transaction id into the application data would keep the signature.
    /// Both are 32 bytes, so such a token is refused when read.
    @Test func bytesMovedBetweenTransactionIDAndApplicationDataAreRefused() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(try Self.fixture("token.json").utf8)) as? [String: Any])
        var paymentData = try #require(object["paymentData"] as? [String: Any])
        var header = try #require(paymentData["header"] as? [String: String])
        let id = try #require(header["transactionId"]), data = try #require(header["applicationData"])
        header["transactionId"] = String(id.prefix(32))
        header["applicationData"] = String(id.dropFirst(32)) + data
        paymentData["header"] = header
        object["paymentData"] = paymentData
        let shifted = try JSONSerialization.data(withJSONObject: object)
        let error = #expect(throws: WalletTokenError.self) { _ = try ApplePayToken(json: shifted) }
        #expect(error?.code == "malformed_token", "\(String(describing: error))")
    }

    @Test func theAccountNumberIsMaskedEverywhereButTheRevealedAnswer() async throws {
        let pki = ApplePayTestPKI()
        let data = try await ApplePayDecryptor(trustRoots: [try pki.root]).decrypt(try pki.token(), for: try pki.merchant, now: Date())
        #expect(data.maskedAccountNumber == "************1488")
        var dumped = ""
        dump(data, to: &dumped)
        for text in [data.description, String(reflecting: data), dumped] {
            #expect(!text.contains("5204245250001488") && text.contains("************1488"), "\(text)")
            if let cryptogram = data.onlinePaymentCryptogram { #expect(!text.contains(cryptogram), "\(text)") }
        }
        #expect(data.jsonValue(revealingAccountNumber: false)["applicationPrimaryAccountNumber"] == .string("************1488"))
        #expect(data.jsonValue(revealingAccountNumber: true)["applicationPrimaryAccountNumber"] == .string("5204245250001488"))
        // The single-use cryptogram goes to the adapter only, like the number.
        #expect(data.jsonValue(revealingAccountNumber: false)["paymentData"]?["onlinePaymentCryptogram"] == nil)
        #expect(data.jsonValue(revealingAccountNumber: true)["paymentData"]?["onlinePaymentCryptogram"] != nil)
    }
}
