import Foundation
import GatewayPayloads
import Hummingbird

/// The server-to-server half of the simulated OPPWA API: preparing a
/// checkout and querying its payment. Back-office operations are in
/// ``HyperPayBackOffice``.
struct HyperPayAPI: Sendable {
    let simulator: HyperPaySimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let simulator = self.simulator
        routes.post("v1/checkouts") { request, _ -> Response in
            if let refusal = Self.unauthorized(request) { return refusal }
            return Self.prepare(try await HyperPayWire.body(request), simulator: simulator)
        }
        routes.get("v1/checkouts/:checkoutId/payment") { request, context -> Response in
            if let refusal = Self.unauthorized(request) { return refusal }
            let checkoutId = context.parameters.get("checkoutId") ?? ""
            return Self.status(checkoutId, entityId: request.uri.queryParameters.get("entityId"), simulator: simulator)
        }
        routes.get("v1/query") { request, _ -> Response in
            if let refusal = Self.unauthorized(request) { return refusal }
            let query = request.uri.queryParameters
            return Self.report(entityId: query.get("entityId") ?? "", merchantTransactionId: query.get("merchantTransactionId") ?? "", simulator: simulator)
        }
        routes.post("v1/payments/:paymentId") { request, context -> Response in
            if let refusal = Self.unauthorized(request) { return refusal }
            let paymentId = context.parameters.get("paymentId") ?? ""
            return HyperPayBackOffice(simulator: simulator).perform(on: paymentId, try await HyperPayWire.body(request))
        }
    }

    /// HTTP 401 with `800.900.300` unless the request carries the sandbox Bearer token.
    static func unauthorized(_ request: Request) -> Response? {
        guard request.headers[.authorization] != "Bearer " + HyperPaySimulator.accessToken else { return nil }
        return HyperPayWire.response(.unauthorized, HyperPayWire.document(HyperPayResultCode.invalidAuthentication))
    }

    static let entities: Set<String> = [HyperPaySimulator.entityId, HyperPaySimulator.madaEntityId]

    /// `POST /v1/checkouts`.
    static func prepare(_ form: [String: String], simulator: HyperPaySimulator) -> Response {
        var errors: [(name: String, value: String, message: String)] = []
        let entityId = form["entityId"] ?? ""
        if !entities.contains(entityId) { errors.append(("entityId", entityId, "unknown entityId for this access token")) }
        let currency = form["currency"] ?? ""
        let amountText = form["amount"] ?? ""
        var amount: Money?
        if Currency(code: currency) == nil {
            errors.append(("currency", currency, "must be an ISO 4217 currency this entity is configured for"))
        } else {
            amount = parseAmount(amountText, currency: currency)
            if amount == nil {
                errors.append(("amount", amountText, "must match [0-9]{1,10}\\.[0-9]{2} and be positive, two decimals whatever the currency (e.g. 92.00, or 9.25 for KWD), and not more exact than the currency"))
            }
        }
        let paymentType = form["paymentType"] ?? ""
        if paymentType != "DB" && paymentType != "PA" { errors.append(("paymentType", paymentType, "must be DB or PA")) }
        let reference = form["merchantTransactionId"]
        errors += HyperPayWire.lengthErrors(form)
        let resultURL = form["shopperResultUrl"]
        if let resultURL, !(resultURL.hasPrefix("https://") || resultURL.hasPrefix("http://")) || URL(string: resultURL) == nil {
            errors.append(("shopperResultUrl", resultURL, "must be an http(s) URL"))
        }
        guard errors.isEmpty, let amount else { return HyperPayWire.parameterError(errors) }
        let checkout = HyperPayCheckout(
            id: HyperPayWire.randomID() + ".sandbox-vm-tx01", entityId: entityId, amount: amount, paymentType: paymentType,
            merchantTransactionId: reference, shopperResultUrl: resultURL,
            merchantInvoiceId: form["merchantInvoiceId"], customerEmail: form["customer.email"])
        simulator.state.withLock { $0.add(checkout) }
        return HyperPayWire.response(.ok, HyperPayWire.document(HyperPayResultCode.checkoutCreated, ndc: checkout.id, ["id": checkout.id]))
    }

    /// `GET /v1/query?entityId=…&merchantTransactionId=…`, OPPWA's transaction
    /// reports: every transaction of the entity under that
    /// `merchantTransactionId`, oldest first (`000.000.100`), or 404
    /// `700.400.580` "cannot find transaction".
    static func report(entityId: String, merchantTransactionId: String, simulator: HyperPaySimulator) -> Response {
        guard entities.contains(entityId) else {
            return HyperPayWire.parameterError([("entityId", entityId, "unknown entityId for this access token")])
        }
        guard !merchantTransactionId.isEmpty else {
            return HyperPayWire.parameterError([("merchantTransactionId", "", "a merchantTransactionId (or a payment id) is required")])
        }
        let found = simulator.state.withLock { state in
            (state.ofReference[merchantTransactionId] ?? []).compactMap { state.transactions[$0] }.filter { $0.entityId == entityId }
        }
        guard !found.isEmpty else {
            return HyperPayWire.response(.notFound, HyperPayWire.document(HyperPayResultCode.transactionNotFound))
        }
        return HyperPayWire.response(.ok, HyperPayWire.document(HyperPayResultCode.successfulRequest, [
            "payments": found.map { transaction -> [String: Any] in
                var members = members(of: transaction)
                members["result"] = ["code": transaction.code, "description": HyperPayResultCode.descriptions[transaction.code] ?? transaction.code]
                members["timestamp"] = transaction.timestamp
                return members
            },
        ]))
    }

    /// `GET /v1/checkouts/{id}/payment?entityId=…`.
    static func status(_ checkoutId: String, entityId: String?, simulator: HyperPaySimulator) -> Response {
        let found = simulator.state.withLock { state in
            state.checkouts[checkoutId].map { ($0, $0.paymentId.flatMap { state.transactions[$0] }) }
        }
        guard let (checkout, payment) = found else {
            return HyperPayWire.response(.badRequest, HyperPayWire.document(
                HyperPayResultCode.invalidParameter,
                description: "invalid or missing parameter - (opp) No payment session found for the requested id - are you mixing test/live servers or have you paid more than 30min ago?"))
        }
        guard entityId == checkout.entityId else {
            return HyperPayWire.parameterError([("entityId", entityId ?? "", "must be the entityId the checkout was prepared with")])
        }
        guard let payment else {
            return HyperPayWire.response(.ok, HyperPayWire.document(HyperPayResultCode.pending, ndc: checkout.id))
        }
        return HyperPayWire.response(.ok, HyperPayWire.document(payment.code, ndc: checkout.id, members(of: payment)))
    }

    /// A transaction's members as OPPWA answers them.
    static func members(of transaction: HyperPayTransaction) -> [String: Any] {
        var members: [String: Any] = [
            "id": transaction.id,
            "paymentType": transaction.paymentType,
            "amount": (try? transaction.amount.decimalString(fractionDigits: 2)) ?? "0",
            "currency": transaction.amount.currency,
            "descriptor": "\(transaction.id.prefix(4)).\(transaction.id.dropFirst(4).prefix(4)).\(transaction.id.dropFirst(8).prefix(4)) Sandbox Shop",
        ]
        members["merchantTransactionId"] = transaction.merchantTransactionId
        members["paymentBrand"] = transaction.brand
        members["referencedId"] = transaction.referencedId
        if let bin = transaction.bin, let last4 = transaction.last4 {
            members["card"] = ["bin": bin, "last4Digits": last4]
        }
        return members
    }

    /// `amount` as OPPWA publishes it, `[0-9]{1,10}\.[0-9]{2}`: two
    /// decimals whatever the currency (`9.25` KWD is 9250 fils), positive.
    static func parseAmount(_ text: String, currency: String) -> Money? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...10).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let exponent = Currency(code: currency)?.exponent else { return nil }
        // Zeros past the currency's own decimals are only the format's (JPY "92.00").
        let fraction = parts[1].count > exponent && parts[1].dropFirst(exponent).allSatisfy({ $0 == "0" }) ? parts[1].prefix(exponent) : parts[1]
        guard let money = try? Money(decimal: fraction.isEmpty ? String(parts[0]) : "\(parts[0]).\(fraction)", currency: currency),
              money.value > 0 else { return nil }
        return money
    }
}
