import CheckoutEngine
import Foundation
import MerchantWebhooks
import Testing
import TestSupport

/// Deliveries signed here and checked by code nobody here wrote: `v1` by the
/// `standardwebhooks` package (PyPI, the specification's reference library,
/// pinned in scripts/install-prerequisites), `v1a` by the `cryptography`
/// package's Ed25519, used exactly as the specification describes. Each
/// signature that verifies is shown refused once altered (body, timestamp,
/// key), so a verifier that accepted everything would fail here. Then the
/// secrets' texts, and their sealing at rest.
@Suite struct StandardWebhookSignerTests {
    /// Whether Python can import both verifiers. CI installs them; missing there fails.
    static let isAvailable = PythonModules.importable("standardwebhooks.webhooks, cryptography.hazmat.primitives.asymmetric.ed25519")

    static let body = Data(#"{"type":"session.paid","data":{"session":"ses_1","amount":1000,"currency":"SAR","note":"شكرا"}}"#.utf8)
    /// The same event with another amount: what an attacker would change.
    static let tampered = Data(#"{"type":"session.paid","data":{"session":"ses_1","amount":9000,"currency":"SAR","note":"شكرا"}}"#.utf8)
    static let id = "evt_ses_1_1"

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func ciHasTheVerifiers() {
        #expect(Self.isAvailable || ProcessInfo.processInfo.environment["CI"] == nil,
                "CI is set but standardwebhooks or cryptography is not installed: run scripts/install-prerequisites")
    }

    // MARK: - Signatures, checked by third-party verifiers

    @Test(.enabled(if: StandardWebhookSignerTests.isAvailable, "standardwebhooks and cryptography (scripts/install-prerequisites)"))
    func theReferenceLibraryVerifiesAnHMACSignatureAndRefusesItAltered() async throws {
        let secret = WebhookSecret.generate(.hmac), stranger = WebhookSecret.generate(.hmac)
        let now = Self.now()
        let fresh = StandardWebhooks.headers(id: Self.id, timestamp: now, body: Self.body, secrets: [secret])
        // Older than the library's five minutes of tolerance.
        let stale = StandardWebhooks.headers(id: Self.id, timestamp: now - 6 * 60, body: Self.body, secrets: [secret])

        let verdicts = try await Self.verdicts([
            Delivery(key: secret.text, headers: fresh, body: Self.body),
            Delivery(key: secret.text, headers: fresh, body: Self.tampered),
            Delivery(key: secret.text, headers: stale, body: Self.body),
            Delivery(key: stranger.text, headers: fresh, body: Self.body),
        ])
        #expect(verdicts == [
            "verified",
            "refused: WebhookVerificationError: No matching signature found",
            "refused: WebhookVerificationError: Message timestamp too old",
            "refused: WebhookVerificationError: No matching signature found",
        ])
    }

    @Test(.enabled(if: StandardWebhookSignerTests.isAvailable, "standardwebhooks and cryptography (scripts/install-prerequisites)"))
    func anEd25519SignatureVerifiesWithThePublicKeyAloneAndNotAltered() async throws {
        let secret = WebhookSecret.generate(.ed25519), stranger = WebhookSecret.generate(.ed25519)
        let publicKey = try #require(secret.publicKeyText), strangersKey = try #require(stranger.publicKeyText)
        let now = Self.now()
        let fresh = StandardWebhooks.headers(id: Self.id, timestamp: now, body: Self.body, secrets: [secret])
        let stale = StandardWebhooks.headers(id: Self.id, timestamp: now - 6 * 60, body: Self.body, secrets: [secret])
        #expect(Self.value(StandardWebhooks.signatureHeader, in: fresh)?.hasPrefix("v1a,") == true)

        let verdicts = try await Self.verdicts([
            Delivery(key: publicKey, headers: fresh, body: Self.body),
            Delivery(key: publicKey, headers: fresh, body: Self.tampered),
            Delivery(key: publicKey, headers: stale, body: Self.body),
            Delivery(key: strangersKey, headers: fresh, body: Self.body),
        ])
        #expect(verdicts == [
            "verified",
            "refused: InvalidSignature: no v1a signature verifies",
            "refused: ValueError: the timestamp is more than five minutes from now",
            "refused: InvalidSignature: no v1a signature verifies",
        ])
    }

    /// During a rotation a delivery carries the new secret's signature, then
    /// the old one's: a merchant still on the old secret and one already on
    /// the new both verify, and nobody else does. The same holds across a
    /// change of scheme (an Ed25519 key replacing an HMAC secret).
    @Test(.enabled(if: StandardWebhookSignerTests.isAvailable, "standardwebhooks and cryptography (scripts/install-prerequisites)"))
    func duringARotationEitherSecretAloneVerifies() async throws {
        let old = WebhookSecret.generate(.hmac), new = WebhookSecret.generate(.hmac), stranger = WebhookSecret.generate(.hmac)
        let ed25519 = WebhookSecret.generate(.ed25519)
        let now = Self.now()
        let rotating = StandardWebhooks.headers(id: Self.id, timestamp: now, body: Self.body, secrets: [new, old])
        #expect(Self.value(StandardWebhooks.signatureHeader, in: rotating)
                == new.signature(id: Self.id, timestamp: now, body: Self.body) + " " + old.signature(id: Self.id, timestamp: now, body: Self.body),
                "the current secret's signature first, space separated")
        let changingScheme = StandardWebhooks.headers(id: Self.id, timestamp: now, body: Self.body, secrets: [ed25519, old])

        let verdicts = try await Self.verdicts([
            Delivery(key: old.text, headers: rotating, body: Self.body),
            Delivery(key: new.text, headers: rotating, body: Self.body),
            Delivery(key: stranger.text, headers: rotating, body: Self.body),
            Delivery(key: old.text, headers: changingScheme, body: Self.body),
            Delivery(key: try #require(ed25519.publicKeyText), headers: changingScheme, body: Self.body),
        ])
        #expect(verdicts == ["verified", "verified", "refused: WebhookVerificationError: No matching signature found", "verified", "verified"])
    }

    /// The reference library's own test vector (its `test_sign_function`):
    /// the exact bytes signed and the exact format, checked without Python.
    @Test func anHMACSignatureMatchesTheReferenceLibrarysVector() throws {
        let secret = try WebhookSecret(text: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let signature = secret.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Data(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aDeliveryCarriesTheStandardHeaders() throws {
        let secret = try WebhookSecret(text: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let headers = StandardWebhooks.headers(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                                               body: Data(#"{"test": 2432232314}"#.utf8), secrets: [secret])
        #expect(headers.map { $0.name } == ["webhook-id", "webhook-timestamp", "webhook-signature", "content-type"])
        #expect(headers.map { $0.value } == ["msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", "application/json"])
    }

    // MARK: - Secret texts

    @Test(arguments: WebhookSigning.allCases)
    func aSecretsTextReadsBackAsTheSameSecret(signing: WebhookSigning) throws {
        let secret = WebhookSecret.generate(signing)
        #expect(secret.signing == signing)
        #expect(try WebhookSecret(text: secret.text) == secret)
        #expect(try WebhookSecret(text: "  \(secret.text)\n") == secret, "a secret read from a file, its newline kept")
        var unpadded = secret.text
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        #expect(unpadded != secret.text, "a generated secret's base64 ends with padding")
        #expect(try WebhookSecret(text: unpadded) == secret, "base64 without its padding, as the reference libraries read it")
        #expect(try WebhookSecret(signing: signing, raw: secret.raw) == secret)
        #expect(secret != WebhookSecret.generate(signing), "two generated secrets differ")
        switch signing {
        case .hmac:
            #expect(secret.text.hasPrefix("whsec_"))
            #expect(secret.raw.count == 32)
            #expect(secret.publicKeyText == nil)
        case .ed25519:
            #expect(secret.text.hasPrefix("whsk_"))
            #expect(secret.raw.count == 64)
            let publicKey = try #require(secret.publicKeyText)
            #expect(publicKey.hasPrefix("whpk_"))
            #expect(Data(base64Encoded: String(publicKey.dropFirst(5)))?.count == 32)
        }
        // What a log line, `dump` or a failure message would show.
        let key = String(secret.text.drop { $0 != "_" }.dropFirst())
        var dumped = ""
        dump(secret, to: &dumped)
        for shown in [String(describing: secret), String(reflecting: secret), dumped] {
            #expect(!shown.contains(key), "a secret's description shows its key")
        }
    }

    /// The layout of an Ed25519 secret key, pinned to the example of the
    /// specification's authors (the Svix server's README): the seed, then
    /// its public key.
    @Test func anEd25519SecretKeyIsItsSeedThenItsPublicKey() throws {
        let secret = try WebhookSecret(text: "whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==")
        #expect(secret.signing == .ed25519)
        #expect(secret.publicKeyText == "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=")
    }

    @Test func aMalformedSecretIsRefusedWithoutBeingShown() throws {
        let svixKey = try #require(Data(base64Encoded: "6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg=="))
        let damaged = svixKey.prefix(32) + Data(svixKey.suffix(32).map { $0 ^ 1 })
        let cases: [(text: String, error: WebhookSecretError)] = [
            ("sk_live_Qm9yZWFsaXNUaGVTZWNyZXQ", .unknownPrefix),
            ("WHSEC_" + Self.randomBase64(32), .unknownPrefix),
            ("whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=", .publicKeyInsteadOfSecret),
            ("whsec_", .notBase64(.hmac)),
            ("whsec_this*is*not*base64*at*all", .notBase64(.hmac)),
            ("whsec_" + Self.randomBase64(23), .hmacLength(23)),
            ("whsec_" + Self.randomBase64(65), .hmacLength(65)),
            ("whsk_" + Self.randomBase64(32), .ed25519Length(32)),
            ("whsk_not-base64_either", .notBase64(.ed25519)),
            ("whsk_" + damaged.base64EncodedString(), .publicKeyMismatch),
        ]
        for (text, expected) in cases {
            let error = #expect(throws: WebhookSecretError.self, "\(expected)") { try WebhookSecret(text: text) }
            #expect(error == expected)
            let payload = String(text.drop { $0 != "_" }.dropFirst())
            if let message = error?.description, !payload.isEmpty {
                #expect(!message.contains(payload), "the message shows the secret: \(message)")
            }
        }
    }

    // MARK: - Sealing at rest

    @Test(arguments: WebhookSigning.allCases)
    func aSealedSecretOpensForItsEndpointAndUnderItsKeyOnly(signing: WebhookSigning) throws {
        let sealer = try SecretSealer(key: Self.randomKey()), otherSealer = try SecretSealer(key: Self.randomKey())
        let secret = WebhookSecret.generate(signing)
        let sealed = try sealer.seal(secret, endpointID: "we_a")

        #expect(try sealer.open(sealed, endpointID: "we_a", signing: signing) == secret)
        #expect(sealed.range(of: Data(secret.raw)) == nil, "the sealed bytes hold the key in clear")
        #expect(try sealer.seal(secret, endpointID: "we_a") != sealed, "each seal draws a new nonce")

        #expect(throws: SecretSealerError.cannotOpen(endpointID: "we_b"), "moved to another endpoint's row") {
            try sealer.open(sealed, endpointID: "we_b", signing: signing)
        }
        #expect(throws: SecretSealerError.cannotOpen(endpointID: "we_a"), "opened under another key") {
            try otherSealer.open(sealed, endpointID: "we_a", signing: signing)
        }
        let otherScheme = WebhookSigning.allCases.first { $0 != signing }!
        #expect(throws: SecretSealerError.cannotOpen(endpointID: "we_a"), "read as the other scheme") {
            try sealer.open(sealed, endpointID: "we_a", signing: otherScheme)
        }
        #expect(throws: SecretSealerError.cannotOpen(endpointID: "we_a"), "cut short") {
            try sealer.open(sealed.prefix(20), endpointID: "we_a", signing: signing)
        }

        let message = SecretSealerError.cannotOpen(endpointID: "we_a").description
        #expect(message.contains("we_a") && message.contains("key file differs"), "\(message)")
    }

    @Test func theSealingKeyFileIsMadeOnceOwnerOnlyAndAWrongOneIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("keys/webhook-secrets.key")

        let key = try SecretSealer.loadKey(at: url)
        #expect(key.count == 32)
        #expect(try Data(contentsOf: url) == key)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).allSatisfy { !$0.hasSuffix(".tmp") })
        #expect(try SecretSealer.loadKey(at: url) == key, "a second load reads the key, never makes another")

        // A secret sealed under the key opens under the key read back.
        let secret = WebhookSecret.generate(.hmac)
        let sealed = try SecretSealer(key: key).seal(secret, endpointID: "we_a")
        #expect(try SecretSealer(key: SecretSealer.loadKey(at: url)).open(sealed, endpointID: "we_a", signing: .hmac) == secret)

        try Data(repeating: 7, count: 31).write(to: url)
        #expect(throws: SecretSealerError.keyFileLength(path: url.path, count: 31)) { try SecretSealer.loadKey(at: url) }
        #expect(try Data(contentsOf: url).count == 31, "a wrong key file is left for the operator, never replaced")
        #expect(throws: SecretSealerError.keyLength(16)) { try SecretSealer(key: Data(count: 16)) }
    }

    // MARK: - Helpers

    /// One delivery as a merchant receives it, and the key it verifies with.
    struct Delivery {
        var key: String
        var headers: [(name: String, value: String)]
        var body: Data
    }

    /// The third-party verifiers. Each case is verified on its own and gets
    /// one line: `verified`, or `refused: <exception>: <message>`.
    static let verifier = #"""
        import base64, json, os, time
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from standardwebhooks.webhooks import Webhook

        def verify_v1a(public_key_text, headers, body):
            # The specification's scheme: Ed25519 over `id.timestamp.body`, the
            # timestamp within five minutes of now (the library's tolerance for v1).
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_text[len("whpk_"):]))
            if abs(time.time() - int(headers["webhook-timestamp"])) > 300:
                raise ValueError("the timestamp is more than five minutes from now")
            signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
            for entry in headers["webhook-signature"].split(" "):
                version, _, signature = entry.partition(",")
                if version == "v1a":
                    try:
                        return key.verify(base64.b64decode(signature), signed)
                    except InvalidSignature:
                        pass
            raise InvalidSignature("no v1a signature verifies")

        for case in json.loads(os.environ["WEBHOOK_CASES"]):
            body = base64.b64decode(case["body"])
            try:
                if case["key"].startswith("whpk_"):
                    verify_v1a(case["key"], case["headers"], body)
                else:
                    Webhook(case["key"]).verify(body, case["headers"])
                print("verified")
            except Exception as error:
                print(f"refused: {type(error).__name__}: {error}")
        """#

    /// What the verifiers say of each delivery, in order.
    static func verdicts(_ deliveries: [Delivery]) async throws -> [String] {
        let cases: [[String: Any]] = deliveries.map { delivery in
            ["key": delivery.key, "body": delivery.body.base64EncodedString(),
             "headers": Dictionary(delivery.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })]
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let run = try await runProcessOffThePool("/usr/bin/env", ["python3", "-c", verifier], environment: ["WEBHOOK_CASES": json])
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == name }?.value
    }

    static func randomKey() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    static func randomBase64(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }
}
