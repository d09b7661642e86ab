import CheckoutEngine
import Foundation
import GatewayPayloads
@_spi(Internals) import PaymentGateway
import PluginHost
import Testing
import TestSupport
import WalletTokens
import X509

/// ABI 1.1 `wallet_decrypt` through the real host: the shipped mock, given
/// Apple Pay merchant keys by its manifest (`file:` secrets), has the host
/// open a recorded token (made by `scripts/applepay-test-token`) and pays
/// only a token for this payment; refusals charge nothing; the log holds the
/// account number masked, never whole. In process and in a runner.
@Suite struct WalletDecryptTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("WalletTokensTests/Fixtures/applepay")

    static func text(_ name: String) throws -> String { try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8) }

    static func token() throws -> JSONValue {
        try JSONValue(jsonData: Data(try text("token.json").utf8))
    }

    static let google = fixtures.deletingLastPathComponent().appendingPathComponent("googlepay")

    /// Google Pay's recorded token as the Google Pay API hands it over: a JSON string.
    static func googleToken() throws -> JSONValue {
        .string(try String(contentsOf: google.appendingPathComponent("token.json"), encoding: .utf8))
    }

    static func gateway(isolation: String, keys: Bool = true, recipient: String = "merchant:12345678901234567890",
                        logs: CapturedLogs) async throws -> PaymentGateway {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        let mock = manifests.appendingPathComponent("mock.json")
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests.appendingPathComponent("mock.json"), to: mock)
        try ManifestText.setIsolation(mock, to: isolation)
        if keys {
            try ManifestText.edit(mock, [("env:GATEWAY_MOCK_APPLEPAY_CERTIFICATE", "file:" + fixtures.appendingPathComponent("merchant-certificate.pem").path),
                                         ("env:GATEWAY_MOCK_APPLEPAY_KEY", "file:" + fixtures.appendingPathComponent("merchant-key.pem").path),
                                         ("env:GATEWAY_MOCK_GOOGLEPAY_KEY", "file:" + google.appendingPathComponent("merchant-private-key.pem").path),
                                         ("env:GATEWAY_MOCK_GOOGLEPAY_RECIPIENT_ID", "file:recipient-id.txt")])
            try Data(recipient.utf8).write(to: manifests.appendingPathComponent("recipient-id.txt"))
        }
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        configuration.reconcileInterval = .seconds(3600)
        configuration.wallets.appleRoots = [try Certificate(pemEncoded: try text("root.pem"))]
        configuration.wallets.googleRootKeys = try GooglePaySigningKey.keys(fromJSON: Data(contentsOf: google.appendingPathComponent("root-keys.json")))
        let signedAt = try #require(ISO8601DateFormatter().date(from: try text("signed-at.txt").trimmingCharacters(in: .whitespacesAndNewlines)))
        configuration.wallets.now = { signedAt.addingTimeInterval(30) }
        return try await PaymentGateway.open(configuration: configuration, logger: logs.logger("gateway"))
    }

    static func pay(_ gateway: PaymentGateway, amount: Int64 = 2500, wallet: String = "applepay", token: JSONValue) async throws -> Attempt {
        let session = try await gateway.createSession(NewSession(amount: Money(value: amount, currency: "SAR"), country: "SA",
                                                                 orderId: "o-\(UUID().uuidString.prefix(8))"))
        return try await gateway.attempt(session: session.session.id, NewAttempt(method: wallet, instrument: ["paymentData": token]))
    }

    /// Google Pay: the token as the Google Pay API hands it over (a JSON
    /// string), opened with the merchant key and recipient id the manifest
    /// names, under the root keys the operator gave; another recipient id is
    /// a decline (the message signature covers it) that charges nothing.
    @Test(arguments: ["in-process", "process"])
    func aGooglePayTokenIsOpenedForItsRecipientOnly(isolation: String) async throws {
        let logs = CapturedLogs()
        let token = try Self.googleToken()
        let gateway = try await Self.gateway(isolation: isolation, logs: logs)
        let paid = try await Self.pay(gateway, wallet: "googlepay", token: token)
        #expect(paid.status == .succeeded, "\(paid)")
        #expect(logs.all.contains { $0.contains("googlepay token opened (************1111)") } && !logs.all.contains { $0.contains("4111111111111111") })
        await gateway.shutdown()

        let other = try await Self.gateway(isolation: isolation, recipient: "merchant:99", logs: CapturedLogs())
        let refused = try await Self.pay(other, wallet: "googlepay", token: token)
        #expect(refused.status == .failed && refused.problem?.code == .walletDeclined && refused.problem?.providerCode == "bad_signature", "\(refused)")
        await other.shutdown()
    }

    @Test(arguments: ["in-process", "process"])
    func theHostOpensTheTokenForTheAdapterWhichPaysAndTheLogHoldsItMasked(isolation: String) async throws {
        let logs = CapturedLogs()
        let gateway = try await Self.gateway(isolation: isolation, logs: logs)
        let paid = try await Self.pay(gateway, token: try Self.token())
        #expect(paid.status == .succeeded && paid.providerID == "mock", "\(paid)")
        #expect(logs.all.contains { $0.contains("applepay token opened (************1111") }, "\(logs.all.suffix(5))")
        #expect(!logs.all.contains { $0.contains("4111111111111111") })
        await gateway.shutdown()
    }

    @Test(arguments: ["in-process", "process"])
    func aTokenForAnotherAmountOrATamperedOneIsDeclinedAndChargesNothing(isolation: String) async throws {
        let logs = CapturedLogs()
        let gateway = try await Self.gateway(isolation: isolation, logs: logs)
        let other = try await Self.pay(gateway, amount: 25_000, token: try Self.token())
        #expect(other.status == .failed && other.problem?.code == .walletDeclined && other.problem?.providerCode == "amount_mismatch", "\(other)")
        #expect(other.balance?.captured ?? 0 == 0)

        guard case .object(var token) = try Self.token(), case .object(var paymentData)? = token["paymentData"],
              case .string(let data)? = paymentData["data"] else { Issue.record("fixture shape"); return }
        var bytes = Array(try #require(Data(base64Encoded: data)))
        bytes[5] ^= 0x01
        paymentData["data"] = .string(Data(bytes).base64EncodedString())
        token["paymentData"] = .object(paymentData)
        let tampered = try await Self.pay(gateway, token: .object(token))
        #expect(tampered.status == .failed && tampered.problem?.code == .walletDeclined && tampered.problem?.providerCode == "tampered_data",
                "\(tampered)")
        #expect(logs.all.contains { $0.contains("wallet_decrypt refused: tampered_data") })
        await gateway.shutdown()
    }

    /// A token pays one payment: a second payment with the same token is
    /// declined as a replay, while the first stays paid.
    @Test(arguments: ["applepay", "googlepay"])
    func aTokenThatPaidOnePaymentIsRefusedForAnother(wallet: String) async throws {
        let gateway = try await Self.gateway(isolation: "in-process", logs: CapturedLogs())
        let token = wallet == "applepay" ? try Self.token() : try Self.googleToken()
        let first = try await Self.pay(gateway, wallet: wallet, token: token)
        #expect(first.status == .succeeded, "\(first)")
        let second = try await Self.pay(gateway, wallet: wallet, token: token)
        #expect(second.status == .failed && second.problem?.providerCode == "replayed_token" && second.problem?.retryable == false, "\(second)")
        await gateway.shutdown()
    }

    /// The shipped manifest's secrets point at unset variables: the mock holds
    /// no keys, so the host opens nothing and the attempt fails, nothing sent.
    @Test func withoutMerchantKeysTheAttemptFailsAndNothingIsSent() async throws {
        let gateway = try await Self.gateway(isolation: "in-process", keys: false, logs: CapturedLogs())
        let refused = try await Self.pay(gateway, token: try Self.token())
        #expect(refused.status == .failed, "\(refused)")
        #expect(refused.problem?.detail.contains("cannot open applepay tokens") == true, "\(String(describing: refused.problem))")
        await gateway.shutdown()
    }
}
