import Foundation
import GatewayAdapterSDK

/// ABI 1.1 `instruments`: what a known payer can use. Swedbank Pay keeps a
/// payer's cards and Swish number by `payerReference`, and shows them only
/// in a payment session: a probe order (amount and currency of the session)
/// is created for the payer, its session read, and the probe aborted.
/// Anonymous sessions get nothing, with no call.
extension SwedbankPayAdapter {
    func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult {
        guard let payer = request.payer?.reference, Self.currencies.contains(request.amount.currency) else { return InstrumentsResult() }
        let probe = SwedbankPayWire.Create(paymentorder: SwedbankPayWire.PaymentOrder(
            currency: request.amount.currency, amount: request.amount.value, description: "Instruments", userAgent: userAgent, language: language,
            generatePaymentToken: false,
            urls: SwedbankPayWire.URLs(hostUrls: ["https://gateway.invalid"], completeUrl: "https://gateway.invalid/complete",
                                       cancelUrl: "https://gateway.invalid/cancel", callbackUrl: nil, termsOfServiceUrl: termsURL),
            payeeInfo: SwedbankPayWire.PayeeInfo(payeeId: payeeID, payeeReference: Self.payeeReference("ins" + UUID().uuidString), payeeName: payeeName,
                                                 orderReference: "instruments"),
            payer: SwedbankPayWire.Payer(payerReference: payer),
            orderItems: [SwedbankPayWire.OrderItem(reference: "instruments", name: "Instruments", unitPrice: request.amount.value, amount: request.amount.value)],
            metadata: [:]))
        let created = try await client.create(probe)
        guard created.ok, let order = created.decode(SwedbankPayWire.OrderAnswer.self), let view = order.operations?.named("view-paymentsession") else {
            throw AdapterError.internal("the probe order was refused: \(created.summary)")
        }
        let read = try? await client.follow(view)
        // The probe is aborted before anything is answered: it never stays payable.
        if let abort = order.operations?.named("abort") {
            _ = try? await client.follow(abort, JSONValue.object(["paymentorder": .object([
                "operation": .string("Abort"), "abortReason": .string("CancelledByMerchant")])]))
        }
        guard let session = read?.decode(SwedbankPayWire.SessionAnswer.self)?.paymentSession else {
            throw AdapterError.internal("the probe's payment session could not be read")
        }
        var offered: [String: [Instrument]] = [:]
        let asked = Set(request.methods)
        for method in session.methods ?? [] {
            switch method.paymentMethod {
            case "Swish" where asked.contains("swish"):
                for prefill in (method.prefills ?? []).sorted(by: { ($0.rank ?? 0) < ($1.rank ?? 0) }) {
                    if let msisdn = prefill.msisdn, let number = SwedbankPayPhone.normalised(msisdn) {
                        offered["swish", default: []].append(.phone(masked: SwedbankPayPhone.masked(number), reference: number))
                    }
                }
            case "CreditCard":
                for prefill in (method.prefills ?? []).sorted(by: { ($0.rank ?? 0) < ($1.rank ?? 0) }) {
                    let brand = (prefill.cardBrand ?? "").lowercased() == "visa" ? "visa" : (prefill.cardBrand ?? "").lowercased() == "mastercard" ? "mastercard" : nil
                    guard let brand, asked.contains(brand), let token = prefill.paymentToken, let masked = prefill.maskedPan, masked.count >= 4,
                          let expiry = prefill.expiryDate?.split(separator: "/"), expiry.count == 2,
                          let month = Int(expiry[0]), let year = Int(expiry[1]) else { continue }
                    offered[brand, default: []].append(.savedCard(brand: brand, last4: String(masked.suffix(4)), expiryMonth: month,
                                                                  expiryYear: year < 100 ? 2000 + year : year, reference: Self.encodeToken(token)))
                }
            case "ApplePay" where asked.contains("applepay"): offered["applepay"] = [.wallet(available: true)]
            case "GooglePay" where asked.contains("googlepay"): offered["googlepay"] = [.wallet(available: true)]
            case let other? where asked.contains("swedbankpay") && !["Swish", "CreditCard", "ApplePay", "GooglePay"].contains(other):
                offered["swedbankpay", default: []].append(.web(label: String(other.prefix(64)), mode: "instrument", reference: other))
            default: break
            }
        }
        if asked.contains("swedbankpay") { offered["swedbankpay", default: []].insert(.web(label: "All payment options", mode: "menu"), at: 0) }
        return InstrumentsResult(methods: offered)
    }

    /// A payment token as an instrument reference, with no digit in it: a
    /// token's digit runs (a UUID's groups) could look like a card number,
    /// and the host refuses any answer holding one. Each character is
    /// shifted into letters (`0`…`9` → `A`…`J`, the rest kept).
    static func encodeToken(_ token: String) -> String {
        "tok_" + String(token.map { c in c.isASCII && c.isNumber ? Character(UnicodeScalar(c.asciiValue! - 48 + 65)) : c })
    }

    /// The token an instrument reference carries (a plain token is taken as it is).
    static func decodeToken(_ reference: String) -> String {
        guard reference.hasPrefix("tok_") else { return reference }
        return String(reference.dropFirst(4).map { c in ("A"..."J").contains(c) ? Character(UnicodeScalar(c.asciiValue! - 65 + 48)) : c })
    }
}
