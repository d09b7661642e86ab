import Crypto
import Foundation
import GatewayAdapterSDK

/// HyperPay's encrypted notifications: the body is hex of AES-256-GCM
/// ciphertext, the IV and the tag are hex in `X-Initialization-Vector` and
/// `X-Authentication-Tag`, the key is the `webhook_key` secret (64 hex
/// digits). The plain text is `{"type": "PAYMENT", "payload": {…}}`. A
/// notification that does not decrypt under the key (the tag fails) is
/// refused; one that does came from HyperPay, and its payment's result code
/// is classified as a status query's would be.
extension HyperPayAdapter {
    func webhook(_ request: WebhookRequest) -> WebhookResult {
        func refused(_ message: String) -> WebhookResult {
            WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: message, retryable: false))
        }
        guard var secret = host.secret("webhook_key") else {
            return refused("no webhook_key secret is configured, so no notification can be decrypted")
        }
        defer { for i in secret.indices { secret[i] = 0 } }
        guard var key = Self.bytes(hex: String(decoding: secret, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32 else {
            return refused("the webhook_key secret must be 64 hex digits (an AES-256 key)")
        }
        defer { for i in key.indices { key[i] = 0 } }
        guard let ivText = request.headers["x-initialization-vector"], let iv = Self.bytes(hex: ivText), !iv.isEmpty else {
            return refused("missing or malformed X-Initialization-Vector header (hex)")
        }
        guard let tagText = request.headers["x-authentication-tag"], let tag = Self.bytes(hex: tagText), tag.count == 16 else {
            return refused("missing or malformed X-Authentication-Tag header (16 bytes of hex)")
        }
        guard let raw = Data(base64Encoded: request.body),
              let ciphertext = Self.bytes(hex: String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return refused("the body is not hex")
        }
        let plain: Data
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
            plain = try AES.GCM.open(box, using: SymmetricKey(data: key))
        } catch {
            return refused("the notification does not decrypt under webhook_key (authentication tag mismatch)")
        }
        guard let document = try? JSONValue(jsonData: plain) else {
            return WebhookResult(verified: true, problem: AdapterProblem(code: .providerError, message: "the decrypted notification is not JSON", retryable: false))
        }
        let payload = HyperPayAnswer(status: 200, body: document["payload"] ?? .null)
        guard document["type"]?.stringValue == "PAYMENT", let paymentId = payload["id"], let code = payload.code else {
            // Registrations, risk notices and the like: genuine, but about no payment.
            return WebhookResult(verified: true, eventId: document["type"]?.stringValue.map { "\($0):\(payload["id"] ?? "")" })
        }
        let eventId = "\(paymentId):\(code)"
        guard let type = payload["paymentType"], type == "DB" || type == "PA" else {
            // A back-office CP/RF/RV: the engine learnt its result from the call itself.
            return WebhookResult(verified: true, eventId: eventId, providerReference: paymentId)
        }
        let result = Self.classify(payload, code: code, reference: nil)
        return WebhookResult(verified: true, eventId: eventId, paymentId: payload["merchantTransactionId"],
                             status: result.status, amount: result.amount, problem: result.problem)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        case 65...70: c - 55
        default: nil
        }
    }
}
