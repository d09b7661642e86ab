import Foundation
import GatewayAdapterSDK

/// authorize: preparing the checkout; and verify, which falls back on it.
extension HyperPayAdapter {
    /// Prepares a checkout and sends the payer to the widget.
    ///
    /// Preparing a checkout moves no money: only a payer holding the checkout
    /// id can pay it, and the id reaches a payer only through this answer. So
    /// when no answer comes back (a timeout, a dropped connection, a 5xx) the
    /// attempt provably did not charge, and it fails as `provider_error`,
    /// safe to retry elsewhere, rather than staying unknown.
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult {
        guard let brand = Self.brands[request.method] else {
            throw AdapterError.invalidRequest("method \(request.method) is not offered by HyperPay (visa, mastercard, mada, applepay)")
        }
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        guard Self.currencies.contains(request.amount.currency) else {
            throw AdapterError.invalidRequest("amount.currency \(request.amount.currency.prefix(8)) is not one HyperPay takes here (\(Self.currencies.joined(separator: ", ")))")
        }
        let amount = try Self.amountText(request.amount)
        let kind: HyperPayReference.Kind = request.method == "mada" ? .mada : .card
        var form = [
            ("entityId", entity(kind)), ("amount", amount), ("currency", request.amount.currency),
            ("paymentType", request.capture == .manual ? "PA" : "DB"),
            ("merchantTransactionId", Self.transactionId(request.paymentId)),
        ]
        // Labels only, within OPPWA's published lengths: the order id from 8
        // characters (cut to 255), the payer's e-mail from 6 to 128; outside
        // them, not sent (OPPWA would refuse the whole checkout).
        if request.orderId.count >= 8 { form.append(("merchantInvoiceId", String(request.orderId.prefix(255)))) }
        if let back = request.returnUrl { form.append(("shopperResultUrl", back)) }
        if let country = request.country { form.append(("billing.country", country)) }
        if let email = request.payer?.email, (6...128).contains(email.count) { form.append(("customer.email", email)) }
        let answer: HyperPayAnswer
        do {
            answer = HyperPayAnswer(try await client.send("POST", "/v1/checkouts", .form(form)))
        } catch let error as HTTPEgressError {
            return Self.notPrepared("no answer to preparing the checkout (\(error.message))")
        }
        guard answer.status == 200, answer.code == "000.200.100", let checkoutId = answer["id"], !checkoutId.isEmpty else {
            if answer.status >= 500 || answer.status == 429 { return Self.notPrepared("preparing the checkout answered HTTP \(answer.status): \(answer.summary)") }
            let code = answer.code ?? "HTTP \(answer.status)"
            let (_, problem) = HyperPayResultClass.failure(code, description: "preparing the checkout was refused: \(answer.summary)")
            return AdapterResult(status: .failed, problem: problem, providerStatus: answer.code)
        }
        let reference = HyperPayReference(kind: kind, checkoutId: checkoutId)
        let url = widgetPageURL.replacingOccurrences(of: "{checkoutId}", with: ProviderHTTPClient.pathSegment(checkoutId))
            .replacingOccurrences(of: "{brands}", with: brand)
        return AdapterResult(status: .pending, providerReference: reference.text, amount: request.amount,
                             action: PaymentAction(type: .redirect, url: url, method: "GET"), providerStatus: answer.code)
    }

    static func notPrepared(_ why: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(
            code: .providerError, message: "HyperPay: \(why); no checkout reached the payer, so nothing was charged",
            retryable: true, safeToRetryElsewhere: true))
    }

    /// Verify: the status query, or, for an attempt whose checkout was never
    /// learnt, a failure that cannot have charged (see ``authorize(_:)``).
    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        guard let text = request.providerReference else {
            return Self.notPrepared("the attempt has no checkout id")
        }
        return try await status(try HyperPayReference(text))
    }
}
