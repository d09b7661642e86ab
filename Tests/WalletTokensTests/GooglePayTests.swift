import Crypto
import Foundation
import GatewayPayloads
import Testing
import WalletTokens

/// Google Pay `ECv2` (direct integration): a token made by an independent
/// producer decrypts at a fixed "now"; each check of the chain (root keys,
/// intermediate signature, expirations, message signature, merchant key,
/// decrypted message) refuses with its own typed error naming what and where;
/// the card number is masked wherever it goes but to the caller that asked
/// for it revealed, and no refusal ever quotes it.
@Suite("Google Pay tokens")
struct GooglePayTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/googlepay")
    /// 2026-12-01T00:00:00Z, before anything in the recorded token expires.
    static let recordedNow = Date(timeIntervalSince1970: 1_796_083_200)
    /// The recorded token's expirations (see Fixtures/googlepay/README.md).
    static let recordedMessageExpiration = Date(timeIntervalSince1970: 1_798_761_600)   // 2027-01-01
    static let recordedKeyExpiration = Date(timeIntervalSince1970: 1_814_313_600)       // 2027-06-30
    static let recordedRootExpiration = Date(timeIntervalSince1970: 1_893_456_000)      // 2030-01-01
    static let now = GooglePayTestTokens.now

    static func fixture(_ name: String) throws -> Data { try Data(contentsOf: fixtures.appendingPathComponent(name)) }

    static var expected: JSONValue { get throws { try JSONValue(jsonData: try fixture("expected.json")) } }

    static var recordedDecryptor: GooglePayDecryptor {
        get throws {
            let roots = try GooglePaySigningKey.keys(fromJSON: try fixture("root-keys.json"))
            let pem = String(decoding: try fixture("merchant-private-key.pem"), as: UTF8.self)
            let recipientId = try #require(try expected["recipientId"]?.stringValue)
            return GooglePayDecryptor(rootKeys: roots, recipientId: recipientId,
                                      merchantKeys: [try P256.KeyAgreement.PrivateKey(pemRepresentation: pem)])
        }
    }

    /// The refusal `body` ends with, or nil (an issue) when it succeeds.
    static func refusal(_ body: () throws(WalletTokenError) -> GooglePayPaymentData) -> WalletTokenError? {
        do throws(WalletTokenError) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// Expects `body` to be refused with `code`, its text naming each of `words`.
    @discardableResult
    static func expectRefusal(_ code: String, mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws(WalletTokenError) -> GooglePayPaymentData) -> WalletTokenError? {
        let error = refusal(body)
        let text = error.map { String(describing: $0) } ?? "decrypted"
        #expect(error?.code == code, "\(text)", sourceLocation: sourceLocation)
        for word in words {
            #expect(error?.description.contains(word) == true, "\(text) names no \(word)", sourceLocation: sourceLocation)
        }
        return error
    }

    // MARK: The recorded token

    /// The producer is `scripts/googlepay-test-token` (Python), written apart
    /// from this module. Its inner strings carry Google's `\u003d` escapes
    /// and `signedKey` an extra member: a decryptor that re-serialised them
    /// instead of verifying the exact strings would fail here.
    @Test func aRecordedTokenFromAnIndependentProducerDecryptsAtAFixedNow() throws {
        let token = try Self.fixture("token.json")
        let outer = try JSONValue(jsonData: token)
        let signedKey = try #require(outer["intermediateSigningKey"]?["signedKey"]?.stringValue)
        #expect(signedKey.contains(#"\u003d"#) && signedKey.contains("keyPurpose"))
        let signedMessage = try #require(outer["signedMessage"]?.stringValue)
        #expect(signedMessage.contains(#"\u003d"#))

        let data = try Self.recordedDecryptor.decrypt(token, now: Self.recordedNow)
        let plaintext = try #require(try Self.expected["plaintext"])
        let details = try #require(plaintext["paymentMethodDetails"])
        #expect(data.pan == details["pan"]?.stringValue)
        #expect(data.messageId == plaintext["messageId"]?.stringValue)
        #expect(data.messageExpiration == Self.recordedMessageExpiration)
        #expect(data.paymentMethod == "CARD" && data.authMethod == "CRYPTOGRAM_3DS")
        #expect(data.expirationMonth == 12 && data.expirationYear == 2030)
        #expect(data.cryptogram == details["cryptogram"]?.stringValue && data.cryptogram?.hasSuffix("=") == true)
        #expect(data.eciIndicator == "05" && data.gatewayMerchantId == nil)
    }

    @Test func theRecordedRootKeysFileKeepsItsECv1KeyWithoutAnExpiration() throws {
        let keys = try GooglePaySigningKey.keys(fromJSON: try Self.fixture("root-keys.json"))
        try #require(keys.count == 2)
        #expect(keys.map(\.protocolVersion) == ["ECv1", "ECv2"])
        #expect(keys[0].expiration == nil && keys[1].expiration == Self.recordedRootExpiration)
    }

    /// Each expiration of the recorded token, reached exactly ("at or before
    /// now" is expired), refuses it at its own step.
    static let recordedExpirations: [(Date, String, String)] = [
        (recordedMessageExpiration, "expired", "message"),
        (recordedKeyExpiration, "expired", "intermediate signing key"),
        (recordedRootExpiration, "wrong_chain", "ECv2 key unexpired"),
    ]

    @Test(arguments: GooglePayTests.recordedExpirations)
    func theRecordedTokenIsRefusedOnceEachOfItsExpirationsIsReached(now: Date, code: String, words: String) throws {
        let token = try Self.fixture("token.json")
        let decryptor = try Self.recordedDecryptor
        Self.expectRefusal(code, mentioning: [words]) { () throws(WalletTokenError) in try decryptor.decrypt(token, now: now) }
    }

    // MARK: Swift-made tokens: what decrypts

    @Test func aSwiftMadeTokenDecryptsToItsPaymentData() throws {
        let maker = GooglePayTestTokens()
        let data = try maker.decryptor.decrypt(try maker.token(), now: Self.now)
        #expect(data == GooglePayPaymentData(
            messageId: "AH2EjtestSwiftMadeMessage", messageExpiration: Self.now + 3600, paymentMethod: "CARD",
            pan: GooglePayTestTokens.pan, expirationMonth: 12, expirationYear: 2030, authMethod: "CRYPTOGRAM_3DS",
            cryptogram: "AgAAAAAABk4DWZ4C28yUQAAAAAA=", eciIndicator: "05"))
    }

    @Test func whileAMerchantKeyRotatesTheKeyThatFitsDecrypts() throws {
        let maker = GooglePayTestTokens()
        let decryptor = GooglePayDecryptor(rootKeys: maker.rootKeys, recipientId: maker.recipientId,
                                           merchantKeys: [P256.KeyAgreement.PrivateKey(), maker.merchantKey])
        #expect(try decryptor.decrypt(try maker.token(), now: Self.now).pan == GooglePayTestTokens.pan)
    }

    @Test func anyTrustedRootAmongSeveralMaySignTheIntermediateKey() throws {
        let maker = GooglePayTestTokens()
        let other = GooglePaySigningKey(key: P256.Signing.PrivateKey().publicKey, protocolVersion: "ECv2", expiration: Self.now + 86_400)
        let decryptor = GooglePayDecryptor(rootKeys: [other] + maker.rootKeys, recipientId: maker.recipientId, merchantKeys: [maker.merchantKey])
        #expect(try decryptor.decrypt(try maker.token(), now: Self.now).messageId == "AH2EjtestSwiftMadeMessage")
    }

    // MARK: The chain of signing keys

    @Test func anIntermediateKeySignedByAnUnknownRootIsTheWrongChain() throws {
        var maker = GooglePayTestTokens()
        maker.intermediateSigner = P256.Signing.PrivateKey()
        let token = try maker.token()
        Self.expectRefusal("wrong_chain", mentioning: ["intermediateSigningKey.signedKey"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
    }

    /// Only `ECv2` root keys with an expiration after "now" are trusted
    /// (Tink skips an `ECv2` key without one), so a token signed by any other
    /// has no chain.
    @Test(arguments: ["expired", "expiring now", "without expiration", "ECv1", "ECv2SigningOnly"])
    func aRootKeyThatIsNotAnUnexpiredECv2KeyIsNotTrusted(root: String) throws {
        var maker = GooglePayTestTokens()
        switch root {
        case "expired": maker.rootExpiration = Self.now - 1
        case "expiring now": maker.rootExpiration = Self.now
        case "without expiration": maker.rootExpiration = nil
        default: maker.rootVersion = root
        }
        let token = try maker.token()
        Self.expectRefusal("wrong_chain", mentioning: ["ECv2"]) { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
    }

    @Test(arguments: [0.0, -1, -86_400])
    func anIntermediateKeyAtOrPastItsExpirationIsExpired(offset: TimeInterval) throws {
        var maker = GooglePayTestTokens()
        maker.keyExpiration = Self.now + offset
        let token = try maker.token()
        Self.expectRefusal("expired", mentioning: ["intermediate signing key"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
    }

    // MARK: The message signature

    @Test func aMessageSignedByAnotherKeyIsABadSignature() throws {
        var maker = GooglePayTestTokens()
        maker.messageSigner = P256.Signing.PrivateKey()
        let token = try maker.token()
        Self.expectRefusal("bad_signature", mentioning: ["signedMessage"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
    }

    @Test func aTokenForAnotherRecipientIsABadSignature() throws {
        let maker = GooglePayTestTokens()
        let token = try maker.token()
        let decryptor = GooglePayDecryptor(rootKeys: maker.rootKeys, recipientId: "merchant:09876543210987654321",
                                           merchantKeys: [maker.merchantKey])
        Self.expectRefusal("bad_signature", mentioning: ["merchant:09876543210987654321"]) { () throws(WalletTokenError) in
            try decryptor.decrypt(token, now: Self.now)
        }
    }

    /// The message signature covers all of `signedMessage`, so changing any
    /// of its members after signing, or writing Google's `\u003d` as the `=`
    /// it stands for (what a re-serialising verifier does), is refused
    /// before anything is decrypted.
    @Test(arguments: ["encryptedMessage", "ephemeralPublicKey", "tag", "unescaped"])
    func changingTheSignedMessageAfterSigningIsABadSignature(change: String) throws {
        let maker = GooglePayTestTokens()
        let json = try maker.tokenJSON()
        let signedMessage = try #require(json["signedMessage"]?.stringValue)
        let changed: String
        if change == "unescaped" {
            changed = signedMessage.replacingOccurrences(of: #"\u003d"#, with: "=")
        } else {
            let marker = try #require(signedMessage.range(of: "\"\(change)\":\""))
            let first = signedMessage[marker.upperBound]
            changed = signedMessage.replacingCharacters(in: marker.upperBound...marker.upperBound, with: first == "B" ? "C" : "B")
        }
        #expect(changed != signedMessage)
        let token = Data(GooglePayTestTokens.editing(json, "signedMessage", to: .string(changed)).jsonBytes())
        Self.expectRefusal("bad_signature") { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
    }

    // MARK: The merchant key and the decrypted message

    @Test func aTokenForAnotherMerchantKeyIsTheWrongMerchantKey() throws {
        let maker = GooglePayTestTokens()
        let token = try maker.token()
        let decryptor = GooglePayDecryptor(rootKeys: maker.rootKeys, recipientId: maker.recipientId,
                                           merchantKeys: [P256.KeyAgreement.PrivateKey(), P256.KeyAgreement.PrivateKey()])
        Self.expectRefusal("wrong_merchant_key", mentioning: ["2 merchant key"]) { () throws(WalletTokenError) in
            try decryptor.decrypt(token, now: Self.now)
        }
    }

    /// A tag is only reached once Google's signature over it has verified;
    /// a tag that then fails under every merchant key cannot be told from a
    /// token encrypted for another key, and is reported as one.
    @Test func aSignedMessageWhoseTagFailsIsTheWrongMerchantKey() throws {
        var maker = GooglePayTestTokens()
        maker.corruptTag = true
        let token = try maker.token()
        Self.expectRefusal("wrong_merchant_key", mentioning: ["signedMessage.tag"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
    }

    @Test(arguments: [0.0, -1, -3600])
    func aMessageAtOrPastItsExpirationIsExpired(offset: TimeInterval) throws {
        var maker = GooglePayTestTokens()
        maker.message = GooglePayTestTokens.paymentData(expiration: Self.now + offset)
        let token = try maker.token()
        Self.expectRefusal("expired", mentioning: ["message"]) { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
    }

    /// Tink lets a message without `messageExpiration` through; Google's
    /// steps make the check mandatory, and so does the host.
    @Test func aMessageWithoutItsExpirationIsMalformedPaymentData() throws {
        var maker = GooglePayTestTokens()
        maker.message = GooglePayTestTokens.paymentData(expiration: nil)
        let token = try maker.token()
        Self.expectRefusal("malformed_payment_data", mentioning: ["messageExpiration is missing"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
    }

    /// Every refusal of the decrypted message names the member and never
    /// quotes the card number, even when the card number is the defect.
    static let paymentDataDefects: [(String, JSONValue?, String)] = [
        ("paymentMethodDetails.pan", JSONValue.string("4111 1111 1111 1111"), "paymentMethodDetails.pan is not 12 to 19 digits"),
        ("paymentMethodDetails.pan", JSONValue.integer(4_111_111_111_111_111), "paymentMethodDetails.pan is not a string"),
        ("paymentMethodDetails.pan", nil, "paymentMethodDetails.pan is missing"),
        ("paymentMethodDetails.expirationMonth", JSONValue.integer(13), "paymentMethodDetails.expirationMonth"),
        ("paymentMethodDetails.expirationYear", JSONValue.string("2030"), "paymentMethodDetails.expirationYear"),
        ("paymentMethodDetails.cryptogram", nil, "paymentMethodDetails.cryptogram is missing"),
        ("paymentMethodDetails", nil, "paymentMethodDetails is missing"),
        ("paymentMethod", JSONValue.string("TOKENIZED_CARD"), "not CARD"),
        ("messageId", nil, "messageId is missing"),
        ("messageExpiration", JSONValue.integer(1_796_083_300_000), "messageExpiration is not a string"),
    ]

    @Test(arguments: GooglePayTests.paymentDataDefects)
    func aDefectInThePaymentDataNamesTheMemberAndNeverTheCardNumber(path: String, value: JSONValue?, words: String) throws {
        var maker = GooglePayTestTokens()
        maker.message = GooglePayTestTokens.editing(GooglePayTestTokens.paymentData(), path, to: value)
        let token = try maker.token()
        let error = Self.expectRefusal("malformed_payment_data", mentioning: [words]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(token, now: Self.now)
        }
        for text in [error.map { String(describing: $0) }, error.map { String(reflecting: $0) }] {
            #expect(text?.contains(GooglePayTestTokens.pan) == false && text?.contains("4111 1111") == false)
        }
    }

    // MARK: The token's shape

    @Test func anECv1TokenIsAnUnsupportedVersion() throws {
        var maker = GooglePayTestTokens()
        maker.protocolVersion = "ECv1"
        let token = try maker.token()
        let error = Self.refusal { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
        #expect(error == WalletTokenError.unsupportedVersion("ECv1"))
    }

    /// A member missing, of the wrong type or not documented in the outer
    /// token is named by its path.
    static let tokenDefects: [(String, JSONValue?, String)] = [
        ("protocolVersion", nil, "protocolVersion is missing"),
        ("signature", nil, "signature is missing"),
        ("signature", JSONValue.integer(1), "signature is not a string"),
        ("signature", JSONValue.string("not base64!"), "signature is not base64"),
        ("intermediateSigningKey", nil, "intermediateSigningKey is missing"),
        ("intermediateSigningKey", JSONValue.string("{}"), "intermediateSigningKey is not a JSON object"),
        ("intermediateSigningKey.signedKey", nil, "intermediateSigningKey.signedKey is missing"),
        ("intermediateSigningKey.signatures", nil, "intermediateSigningKey.signatures is missing"),
        ("intermediateSigningKey.signatures", JSONValue.array([]), "intermediateSigningKey.signatures is empty"),
        ("intermediateSigningKey.signatures", JSONValue.array([.string("not base64!")]), "intermediateSigningKey.signatures[0] is not base64"),
        ("intermediateSigningKey.extra", JSONValue.string("x"), "intermediateSigningKey has an unexpected member extra"),
        ("signedMessage", nil, "signedMessage is missing"),
        ("signedMessage", JSONValue.object([:]), "signedMessage is not a string"),
        ("extra", JSONValue.bool(true), "the token has an unexpected member extra"),
    ]

    @Test(arguments: GooglePayTests.tokenDefects)
    func aMalformedTokenNamesTheMemberAtFault(path: String, value: JSONValue?, words: String) throws {
        let maker = GooglePayTestTokens()
        let token = Data(GooglePayTestTokens.editing(try maker.tokenJSON(), path, to: value).jsonBytes())
        Self.expectRefusal("malformed_token", mentioning: [words]) { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
    }

    @Test(arguments: ["{", "[]", "\"ECv2\"", ""])
    func aTokenThatIsNotAJSONObjectIsMalformed(text: String) throws {
        let maker = GooglePayTestTokens()
        Self.expectRefusal("malformed_token", mentioning: ["the token is not"]) { () throws(WalletTokenError) in
            try maker.decryptor.decrypt(Data(text.utf8), now: Self.now)
        }
    }

    /// Defects inside the signed strings, signed as they are: they pass the
    /// signatures and are refused when the string is read.
    @Test(arguments: [
        ("signedKey without keyExpiration", "intermediateSigningKey.signedKey.keyExpiration is missing"),
        ("signedKey with a key that is not P-256", "intermediateSigningKey.signedKey.keyValue is not a P-256"),
        ("signedKey with keyExpiration in seconds with a fraction", "intermediateSigningKey.signedKey.keyExpiration is not milliseconds"),
        ("signedMessage without tag", "signedMessage.tag is missing"),
        ("signedMessage with a short tag", "signedMessage.tag is 16 bytes, not 32"),
        ("signedMessage with an extra member", "signedMessage has an unexpected member extra"),
        ("signedMessage with a compressed ephemeral key", "signedMessage.ephemeralPublicKey is not an uncompressed P-256 point"),
        ("signedMessage with an ephemeral key off the curve", "signedMessage.ephemeralPublicKey is not a point on P-256"),
    ])
    func aSignedStringOfTheWrongShapeIsMalformed(defect: String, words: String) throws {
        var maker = GooglePayTestTokens()
        switch defect {
        case "signedKey without keyExpiration":
            maker.editSignedKey = { $0.filter { $0.0 != "keyExpiration" } }
        case "signedKey with a key that is not P-256":
            maker.editSignedKey = { $0.map { $0.0 == "keyValue" ? ($0.0, Data(repeating: 7, count: 91).base64EncodedString()) : $0 } }
        case "signedKey with keyExpiration in seconds with a fraction":
            maker.editSignedKey = { $0.map { $0.0 == "keyExpiration" ? ($0.0, "1796083200.5") : $0 } }
        case "signedMessage without tag":
            maker.editSignedMessage = { $0.filter { $0.0 != "tag" } }
        case "signedMessage with a short tag":
            maker.editSignedMessage = { $0.map { $0.0 == "tag" ? ($0.0, Data(count: 16).base64EncodedString()) : $0 } }
        case "signedMessage with an extra member":
            maker.editSignedMessage = { $0 + [("extra", "x")] }
        case "signedMessage with a compressed ephemeral key":
            let compressed = P256.KeyAgreement.PrivateKey().publicKey.compressedRepresentation.base64EncodedString()
            maker.editSignedMessage = { $0.map { $0.0 == "ephemeralPublicKey" ? ($0.0, compressed) : $0 } }
        default:
            let offCurve = Data([0x04] + [UInt8](repeating: 1, count: 64)).base64EncodedString()
            maker.editSignedMessage = { $0.map { $0.0 == "ephemeralPublicKey" ? ($0.0, offCurve) : $0 } }
        }
        let token = try maker.token()
        Self.expectRefusal("malformed_token", mentioning: [words]) { () throws(WalletTokenError) in try maker.decryptor.decrypt(token, now: Self.now) }
    }

    @Test func aDecryptorWithoutAMerchantKeyIsRefusedAsTheMerchantIdentity() throws {
        let maker = GooglePayTestTokens()
        let token = try maker.token()
        let decryptor = GooglePayDecryptor(rootKeys: maker.rootKeys, recipientId: maker.recipientId, merchantKeys: [])
        Self.expectRefusal("merchant_identity") { () throws(WalletTokenError) in try decryptor.decrypt(token, now: Self.now) }
    }

    @Test(arguments: [
        (#"{"keys":[{"keyValue":"AAAA","protocolVersion":"ECv2","keyExpiration":"1893456000000"}]}"#, "keys[0].keyValue is not a P-256"),
        (#"{"keys":[{"keyValue":"not base64!","protocolVersion":"ECv2"}]}"#, "keys[0].keyValue is not base64"),
        (#"{"keys":[]}"#, "keys is empty"),
        (#"{"key":[]}"#, "keys is missing"),
        ("<html>", "the keys file is not JSON"),
    ])
    func aDamagedRootKeysFileIsRefusedNamingTheKeyAtFault(json: String, words: String) {
        let error = #expect(throws: WalletTokenError.self) { _ = try GooglePaySigningKey.keys(fromJSON: Data(json.utf8)) }
        #expect(error?.code == "malformed_token" && error?.description.contains(words) == true, "\(String(describing: error))")
    }

    // MARK: Masking

    @Test func theCardNumberIsMaskedEverywhereButTheRevealedAnswer() throws {
        let maker = GooglePayTestTokens()
        let data = try maker.decryptor.decrypt(try maker.token(), now: Self.now)
        #expect(data.maskedAccountNumber == "************1111")
        var dumped = ""
        dump(data, to: &dumped)
        for text in [data.description, String(reflecting: data), dumped] {
            #expect(!text.contains(GooglePayTestTokens.pan) && text.contains("************1111"), "\(text)")
            #expect(!text.contains("AgAAAAAABk4DWZ4C28yUQAAAAAA="))
        }
        let masked = data.jsonValue(revealingAccountNumber: false).serialized
        #expect(!masked.contains(GooglePayTestTokens.pan) && !masked.contains("cryptogram"))
        #expect(data.jsonValue(revealingAccountNumber: false)["paymentMethodDetails"]?["pan"] == .string("************1111"))
        let revealed = data.jsonValue(revealingAccountNumber: true)
        #expect(revealed["paymentMethodDetails"]?["pan"] == .string(GooglePayTestTokens.pan))
        #expect(revealed["paymentMethodDetails"]?["cryptogram"] == .string("AgAAAAAABk4DWZ4C28yUQAAAAAA="))
        #expect(revealed["messageExpiration"] == .string(GooglePayTestTokens.milliseconds(Self.now + 3600)))
    }
}
