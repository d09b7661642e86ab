import Crypto
import Foundation
import GatewayPayloads
import Logging
import WalletTokens
import X509

/// What the host's `wallet_decrypt` service trusts: Apple Pay's roots (Apple
/// Root CA - G3, embedded), its signing-time window, Google Pay's root
/// signing keys (Google's keys.json, which the operator keeps current: none
/// until given, and then no Google Pay token opens), and the clock ("now"
/// may be fixed to replay recorded tokens in tests).
public struct WalletSettings: Sendable {
    public var appleRoots: [Certificate] = [AppleRootCA.g3]
    public var appleSigningTimeWindow: TimeInterval = 5 * 60
    public var googleRootKeys: [GooglePaySigningKey] = []
    public var now: @Sendable () -> Date = { Date() }

    public init() {}
}

/// The `wallet_decrypt` host service of one adapter instance: the request
/// document in, the callback's status and document out. The merchant keys
/// are the adapter's own secrets (by fixed names), so an adapter can open
/// only the tokens its manifest holds keys for; the payment data goes back
/// whole to that adapter alone, and to the log only masked.
struct WalletService: Sendable {
    static let appleCertificate = "applepay_merchant_certificate"
    static let appleKey = "applepay_merchant_key"
    static let googleKey = "googlepay_merchant_key"
    static let googleRecipient = "googlepay_recipient_id"

    let settings: WalletSettings
    let secrets: SecretResolver
    let logger: Logger

    func decrypt(_ body: Data) async -> (Int32, Data) {
        guard let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let wallet = request["wallet"] as? String,
              let token = request["token"] as? [String: Any] else {
            return refusal(.invalidRequest, "malformed_request", #"the request is not {"wallet": "applepay" or "googlepay", "token": {...}}"#)
        }
        switch wallet {
        case "applepay": return await decryptApplePay(token)
        case "googlepay": return decryptGooglePay(token)
        default: return refusal(.unsupported, "unsupported_wallet", "the host decrypts applepay and googlepay tokens, not \(wallet.prefix(40))")
        }
    }

    private func decryptApplePay(_ token: [String: Any]) async -> (Int32, Data) {
        guard let certificate = secrets.value(of: Self.appleCertificate), let key = secrets.value(of: Self.appleKey) else {
            return refusal(.notFound, "no_merchant_keys",
                           "the manifest's secrets name no \(Self.appleCertificate) and \(Self.appleKey) (or they resolve to nothing)")
        }
        do throws(WalletTokenError) {
            let merchant = try ApplePayMerchant(certificatePEM: String(decoding: certificate, as: UTF8.self), privateKeyPEM: String(decoding: key, as: UTF8.self))
            let tokenJSON = (try? JSONSerialization.data(withJSONObject: token)) ?? Data()
            let decryptor = ApplePayDecryptor(trustRoots: settings.appleRoots, signingTimeWindow: settings.appleSigningTimeWindow)
            let data = try await decryptor.decrypt(try ApplePayToken(json: tokenJSON), for: merchant, now: settings.now())
            logger.info("wallet_decrypt: applepay token opened (\(data.maskedAccountNumber), \(data.transactionAmount) in \(data.currencyCode))")
            var writer = JSONWriter()
            writer.value(.object(["wallet": .string("applepay"), "paymentData": data.jsonValue(revealingAccountNumber: true)]))
            return (ABIStatus.ok.rawValue, Data(writer.bytes))
        } catch {
            return refusal(.invalidRequest, error.code, error.description)
        }
    }

    private func decryptGooglePay(_ token: [String: Any]) -> (Int32, Data) {
        guard let key = secrets.value(of: Self.googleKey), let recipient = secrets.value(of: Self.googleRecipient) else {
            return refusal(.notFound, "no_merchant_keys",
                           "the manifest's secrets name no \(Self.googleKey) and \(Self.googleRecipient) (or they resolve to nothing)")
        }
        do throws(WalletTokenError) {
            let merchantKey: P256.KeyAgreement.PrivateKey
            do { merchantKey = try P256.KeyAgreement.PrivateKey(pemRepresentation: String(decoding: key, as: UTF8.self)) } catch {
                throw .merchantIdentity("\(Self.googleKey) is not a P-256 private key in PEM")
            }
            let decryptor = GooglePayDecryptor(rootKeys: settings.googleRootKeys, recipientId: String(decoding: recipient, as: UTF8.self),
                                               merchantKeys: [merchantKey])
            let tokenJSON = (try? JSONSerialization.data(withJSONObject: token)) ?? Data()
            let data = try decryptor.decrypt(tokenJSON, now: settings.now())
            logger.info("wallet_decrypt: googlepay token opened (\(data.maskedAccountNumber))")
            var writer = JSONWriter()
            writer.value(.object(["wallet": .string("googlepay"), "paymentData": data.jsonValue(revealingAccountNumber: true)]))
            return (ABIStatus.ok.rawValue, Data(writer.bytes))
        } catch {
            return refusal(.invalidRequest, error.code, error.description)
        }
    }

    private func refusal(_ status: ABIStatus, _ code: String, _ message: String) -> (Int32, Data) {
        logger.warning("wallet_decrypt refused: \(code): \(message)")
        var writer = JSONWriter()
        writer.value(.object(["code": .string(code), "message": .string(message)]))
        return (status.rawValue, Data(writer.bytes))
    }
}
