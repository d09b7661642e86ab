import Crypto
import Foundation
import GatewayPayloads
import Logging
import Synchronization
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
    /// The tokens opened so far, shared by every adapter this host loads.
    public var opened = OpenedWalletTokens()
    public var now: @Sendable () -> Date = { Date() }

    public init() {}
}

/// Which payment each wallet token opened for: a token pays one payment
/// (Apple's "de-duplicate the transaction id within the window"; Google's
/// message id, until the message expires). Opening it again for the same
/// payment (a retried authorize) is fine; for another payment, or again
/// without a payment id, it is refused. Held in memory by this host for as
/// long as the token could still be accepted.
public final class OpenedWalletTokens: Sendable {
    private struct Entry { var payment: String?; var until: Date }
    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    /// Records `token` as opened for `payment` until `until`; false when
    /// another payment holds it (or it was opened without a payment id).
    func claim(_ token: String, payment: String?, until: Date, now: Date) -> Bool {
        entries.withLock { entries in
            if entries.count > 10_000 { entries = entries.filter { $0.value.until > now } }
            if let held = entries[token], held.until > now {
                guard let payment, held.payment == payment else { return false }
                return true
            }
            entries[token] = Entry(payment: payment, until: until)
            return true
        }
    }
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
        let payment = request["paymentId"] as? String
        switch wallet {
        case "applepay": return await decryptApplePay(token, payment: payment)
        case "googlepay": return decryptGooglePay(token, payment: payment)
        default: return refusal(.unsupported, "unsupported_wallet", "the host decrypts applepay and googlepay tokens, not \(wallet.prefix(40))")
        }
    }

    private func decryptApplePay(_ token: [String: Any], payment: String?) async -> (Int32, Data) {
        guard let certificate = secrets.value(of: Self.appleCertificate), let key = secrets.value(of: Self.appleKey) else {
            return refusal(.notFound, "no_merchant_keys",
                           "the manifest's secrets name no \(Self.appleCertificate) and \(Self.appleKey) (or they resolve to nothing)")
        }
        do throws(WalletTokenError) {
            let merchant = try ApplePayMerchant(certificatePEM: String(decoding: certificate, as: UTF8.self), privateKeyPEM: String(decoding: key, as: UTF8.self))
            let tokenJSON = (try? JSONSerialization.data(withJSONObject: token)) ?? Data()
            let decryptor = ApplePayDecryptor(trustRoots: settings.appleRoots, signingTimeWindow: settings.appleSigningTimeWindow)
            let parsed = try ApplePayToken(json: tokenJSON)
            let now = settings.now()
            let data = try await decryptor.decrypt(parsed, for: merchant, now: now)
            let id = "applepay:" + parsed.transactionID.map { String(format: "%02x", $0) }.joined()
            guard settings.opened.claim(id, payment: payment, until: now.addingTimeInterval(2 * settings.appleSigningTimeWindow), now: now) else {
                return refusal(.invalidRequest, "replayed_token", "this Apple Pay token was already opened for another payment")
            }
            logger.info("wallet_decrypt: applepay token opened (\(data.maskedAccountNumber), \(data.transactionAmount) in \(data.currencyCode))")
            var writer = JSONWriter()
            writer.value(.object(["wallet": .string("applepay"), "paymentData": data.jsonValue(revealingAccountNumber: true)]))
            return (ABIStatus.ok.rawValue, Data(writer.bytes))
        } catch {
            return refusal(Self.status(of: error), error.code, error.description)
        }
    }

    /// A refused token is the request's fault; a merchant identity the host
    /// cannot use is the host's configuration's, not the payer's.
    static func status(of error: WalletTokenError) -> ABIStatus {
        if case .merchantIdentity = error { return .internal }
        return .invalidRequest
    }

    private func decryptGooglePay(_ token: [String: Any], payment: String?) -> (Int32, Data) {
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
            let now = settings.now()
            let data = try decryptor.decrypt(tokenJSON, now: now)
            guard settings.opened.claim("googlepay:" + data.messageId, payment: payment, until: data.messageExpiration, now: now) else {
                return refusal(.invalidRequest, "replayed_token", "this Google Pay token was already opened for another payment")
            }
            logger.info("wallet_decrypt: googlepay token opened (\(data.maskedAccountNumber))")
            var writer = JSONWriter()
            writer.value(.object(["wallet": .string("googlepay"), "paymentData": data.jsonValue(revealingAccountNumber: true)]))
            return (ABIStatus.ok.rawValue, Data(writer.bytes))
        } catch {
            return refusal(Self.status(of: error), error.code, error.description)
        }
    }

    private func refusal(_ status: ABIStatus, _ code: String, _ text: String) -> (Int32, Data) {
        // A refusal may quote what the client sent (a version string): never a card number.
        let message = Redaction.maskingCardNumbers(in: text)
        logger.warning("wallet_decrypt refused: \(code): \(message)")
        var writer = JSONWriter()
        writer.value(.object(["code": .string(code), "message": .string(message)]))
        return (status.rawValue, Data(writer.bytes))
    }
}
