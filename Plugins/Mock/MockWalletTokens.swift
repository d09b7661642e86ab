import Foundation
import GatewayAdapterSDK
import GatewayPayloads

/// Wallet tokens with the merchant's own keys: an `applepay` attempt whose
/// instrument carries `paymentData` (the device's PKPaymentToken, or its
/// paymentData), or a `googlepay` one carrying `paymentData` (the Google Pay
/// API's `tokenizationData.token`, as its JSON string or as the object), the
/// member Swedbank Pay's wallets take too, is opened
/// by the host's `wallet_decrypt` service with the keys this manifest names
/// (docs/wallet-tokens.md), as a real adapter forwarding a decrypted network
/// token would. An Apple Pay token must be for this payment's amount and
/// currency (Google Pay's carry none). A token the host refuses, or one for
/// another amount, is a decline that charges nothing.
extension MockAdapter {
    /// The wallet and its token, when the attempt carries one.
    static func walletToken(_ request: AuthorizeRequest) -> (wallet: String, token: JSONValue)? {
        switch request.method {
        case "applepay", "googlepay": request.instrument?["paymentData"].map { (request.method, $0) }
        default: nil
        }
    }

    /// The decline to answer instead of charging, or nil when the token opened for this payment.
    func walletRefusal(_ request: AuthorizeRequest) async throws -> AdapterProblem? {
        guard let (wallet, token) = Self.walletToken(request) else { return nil }
        let document: Data
        switch token {
        case .object: document = Data(token.jsonBytes())
        case .string(let text) where wallet == "googlepay": document = Data(text.utf8)
        default: throw AdapterError.invalidRequest("instrument.paymentData must be the wallet's token object")
        }
        let answer: Data
        do {
            answer = try await host.decryptWalletToken(wallet: wallet, token: document, paymentID: request.paymentId)
        } catch let refusal as WalletTokenRefusal where ["no_merchant_keys", "malformed_request", "merchant_identity"].contains(refusal.code) {
            throw AdapterError.invalidRequest("this mock cannot open \(wallet) tokens: \(refusal.message)")
        } catch let refusal as WalletTokenRefusal {
            return AdapterProblem(code: .walletDeclined, message: "the \(wallet) token was refused: \(refusal.code)", retryable: false,
                                  providerCode: refusal.code)
        }
        guard wallet == "applepay" else { return nil }
        let data = (try? JSONSerialization.jsonObject(with: answer) as? [String: Any])?["paymentData"] as? [String: Any]
        let amount = (data?["transactionAmount"] as? NSNumber)?.int64Value
        let currency = data?["currencyCode"] as? String
        guard amount == request.amount.value, currency == request.amount.knownCurrency?.numericCode else {
            return AdapterProblem(code: .walletDeclined, message: "the Apple Pay token was made for another amount or currency", retryable: false,
                                  providerCode: "amount_mismatch")
        }
        return nil
    }
}
