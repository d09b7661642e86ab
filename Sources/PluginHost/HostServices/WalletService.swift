import PaymentFields
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

    /// A token opened: its id for the one-payment memory and until when it
    /// counts, a masked summary for the log, the payment data (whole).
    private struct Opened {
        var id: String
        var until: Date
        var summary: String
        var paymentData: JSONValue
    }

    func decrypt(_ body: Data) async -> (Int32, Data) {
        guard let request = try? WalletDecryptRequest(jsonData: body), case let wallet = request.wallet,
              let tokenJSON = Self.tokenDocument(request.token, wallet: wallet) else {
            return refusal(.invalidRequest, "malformed_request", #"the request is not {"wallet": "applepay" or "googlepay", "token": {...}}"#)
        }
        let names: (name: String, secrets: [String])
        switch wallet {
        case "applepay": names = ("Apple Pay", [Self.appleCertificate, Self.appleKey])
        case "googlepay": names = ("Google Pay", [Self.googleKey, Self.googleRecipient])
        default: return refusal(.unsupported, "unsupported_wallet", "the host decrypts applepay and googlepay tokens, not \(wallet.prefix(40))")
        }
        let values = names.secrets.compactMap { secrets.value(of: $0) }.map { String(decoding: $0, as: UTF8.self) }
        guard values.count == names.secrets.count else {
            return refusal(.notFound, "no_merchant_keys",
                           "the manifest's secrets name no \(names.secrets.joined(separator: " and ")) (or they resolve to nothing)")
        }
        let now = settings.now()
        do throws(WalletTokenError) {
            let opened = wallet == "applepay" ? try await openApplePay(tokenJSON, certificate: values[0], key: values[1], now: now)
                                              : try openGooglePay(tokenJSON, key: values[0], recipient: values[1], now: now)
            guard settings.opened.claim(opened.id, payment: request.paymentID, until: opened.until, now: now) else {
                return refusal(.invalidRequest, "replayed_token", "this \(names.name) token was already opened for another payment")
            }
            logger.info("wallet_decrypt: \(wallet) token opened (\(opened.summary))")
            var writer = JSONWriter()
            writer.value(.object(["wallet": .string(wallet), "paymentData": opened.paymentData]))
            return (ABIStatus.ok.rawValue, Data(writer.bytes))
        } catch {
            return refusal(Self.status(of: error), error.code, error.description)
        }
    }

    /// The request's token as the JSON text the wallet modules read: an
    /// object as its JSON, or a Google Pay token given as the JSON string the
    /// Google Pay API hands over, as that string's bytes (its `signedKey` and
    /// `signedMessage` are kept as they are either way: strings). Nil for
    /// anything else.
    static func tokenDocument(_ token: JSONValue?, wallet: String) -> Data? {
        guard let token else { return nil }
        switch token {
        case .object: return Data(token.jsonBytes())
        case .string(let text) where wallet == "googlepay": return Data(text.utf8)
        default: return nil
        }
    }

    private func openApplePay(_ token: Data, certificate: String, key: String, now: Date) async throws(WalletTokenError) -> Opened {
        let merchant = try ApplePayMerchant(certificatePEM: certificate, privateKeyPEM: key)
        let parsed = try ApplePayToken(json: token)
        let decryptor = ApplePayDecryptor(trustRoots: settings.appleRoots, signingTimeWindow: settings.appleSigningTimeWindow)
        let data = try await decryptor.decrypt(parsed, for: merchant, now: now)
        return Opened(id: "applepay:" + Hex.lowercase(parsed.transactionID), until: now.addingTimeInterval(2 * settings.appleSigningTimeWindow),
                      summary: "\(data.maskedAccountNumber), \(data.transactionAmount) in \(data.currencyCode)",
                      paymentData: data.jsonValue(revealingAccountNumber: true))
    }

    private func openGooglePay(_ token: Data, key: String, recipient: String, now: Date) throws(WalletTokenError) -> Opened {
        let merchantKey: P256.KeyAgreement.PrivateKey
        do { merchantKey = try P256.KeyAgreement.PrivateKey(pemRepresentation: key) } catch {
            throw .merchantIdentity("\(Self.googleKey) is not a P-256 private key in PEM")
        }
        let data = try GooglePayDecryptor(rootKeys: settings.googleRootKeys, recipientId: recipient, merchantKeys: [merchantKey]).decrypt(token, now: now)
        return Opened(id: "googlepay:" + data.messageId, until: data.messageExpiration, summary: data.maskedAccountNumber,
                      paymentData: data.jsonValue(revealingAccountNumber: true))
    }

    /// A refused token is the request's fault; a merchant identity the host
    /// cannot use is the host's configuration's, not the payer's.
    static func status(of error: WalletTokenError) -> ABIStatus {
        if case .merchantIdentity = error { return .internal }
        return .invalidRequest
    }

    private func refusal(_ status: ABIStatus, _ code: String, _ text: String) -> (Int32, Data) {
        // A refusal may quote what the client sent (a version string): never a card number.
        let message = Redaction.maskingCardNumbers(in: text)
        logger.warning("wallet_decrypt refused: \(code): \(message)")
        return (status.rawValue, Data(WalletRefusalDocument(code: code, message: message).jsonBytes()))
    }
}
