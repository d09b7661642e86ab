import Crypto
import Foundation

/// An encrypted HyperPay notification, ready to deliver to a merchant's
/// webhook: the body is hex of the AES-256-GCM ciphertext of
/// `{"type":"PAYMENT","payload":{…the payment…}}`, with the IV and the tag in
/// `X-Initialization-Vector` and `X-Authentication-Tag` (hex).
public struct HyperPayNotification: Sendable {
    public var headers: [String: String]
    public var body: Data
}

extension HyperPaySimulator {
    /// The notification HyperPay sends for checkout `checkoutId`'s payment,
    /// encrypted with `key` (hex, 64 digits; the sandbox ``webhookKey`` unless
    /// told). Nil before the checkout was paid.
    public func notification(forCheckout checkoutId: String, key: String = HyperPaySimulator.webhookKey) -> HyperPayNotification? {
        guard let payment = payment(ofCheckout: checkoutId), let keyBytes = Self.bytes(hex: key), keyBytes.count == 32 else { return nil }
        var payload = HyperPayAPI.members(of: payment)
        payload["result"] = HyperPayWire.result(payment.code)
        payload["ndc"] = checkoutId
        payload["timestamp"] = payment.timestamp
        let plain = SimulatorJSON.text(["type": "PAYMENT", "payload": payload])
        let nonce = try! AES.GCM.Nonce(data: Data((0..<12).map { _ in UInt8.random(in: 0...255) }))
        guard let sealed = try? AES.GCM.seal(Data(plain.utf8), using: SymmetricKey(data: keyBytes), nonce: nonce) else { return nil }
        return HyperPayNotification(
            headers: ["Content-Type": "text/plain", "X-Initialization-Vector": Self.hex(Data(nonce)), "X-Authentication-Tag": Self.hex(sealed.tag)],
            body: Data(Self.hex(sealed.ciphertext).utf8))
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02X", $0) }.joined() }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
