import Foundation
import GatewayAdapterSDK

/// Where a payment order stands: the session after an attempt, continue,
/// verify and callbacks. Only `GET`s of the order (and its session) decide.
extension SwedbankPayAdapter {
    /// The result of a native session after an attempt's step.
    /// - Parameter readOrder: whether a session that sends the payer on
    ///   (`redirect-payer`) has the order read; false when the order was just
    ///   read (`Initialized`), so the two never chase each other.
    func interpret(_ session: SwedbankPayWire.SessionAnswer, reference: SwedbankPayReference, request paymentId: String, amount: Money?,
                   back: String?, instrument: String?, readOrder: Bool = true) async throws -> AdapterResult {
        if let problem = session.problem {
            return try await abandon(reference, problem: problem, instrument: instrument)
        }
        let operations = session.operations ?? []
        if operations.named("redirect-payer") != nil {
            guard readOrder else { return AdapterResult(status: .pending, providerReference: reference.text, providerStatus: "Initialized") }
            return try await settle(reference, paymentId: paymentId)
        }
        if let complete = operations.named("complete-authentication"), let task = complete.tasks?.first(where: { $0.rel == "sca-redirect" }),
           let url = task.href {
            var fields: [String: String] = [:]
            for expectation in task.expects ?? [] { if let name = expectation.name, let value = expectation.value { fields[name] = value } }
            return AdapterResult(status: .pending, providerReference: reference.text, amount: amount,
                                 action: PaymentAction(type: .threeDS, url: url, method: task.method ?? "POST", formFields: fields),
                                 providerStatus: "Initialized")
        }
        if let get = operations.named("get-payment") {
            if let launch = get.tasks?.first(where: { $0.rel == "launch-client-app" }), var url = launch.href {
                // The app returns the payer to the shop (the SDK adds callbackurl when it is missing).
                if let back, !url.contains("callbackurl=") {
                    url += (url.contains("?") ? "&" : "?") + "callbackurl=" + Self.query(Self.returning(back, "app"))
                }
                return AdapterResult(status: .pending, providerReference: reference.text, amount: amount,
                                     action: PaymentAction(type: .appSwitch, url: url, method: "GET"), providerStatus: "Initialized")
            }
            // Swish on another phone: the payer approves there.
            return AdapterResult(status: .pending, providerReference: reference.text, amount: amount, providerStatus: "Initialized")
        }
        // Nothing started yet (the payer is on the menu): still pending.
        return AdapterResult(status: .pending, providerReference: reference.text, amount: amount, providerStatus: "Initialized")
    }

    /// A native attempt that ended with `problem`: the problem is
    /// acknowledged and the order aborted, so that nothing can pay it later,
    /// and only once a `GET` shows it aborted is the failure answered.
    /// Otherwise the attempt stays pending (verify tries again).
    func abandon(_ reference: SwedbankPayReference, problem: SwedbankPayWire.Problem, instrument: String?,
                 fallback: ProblemCode? = nil) async throws -> AdapterResult {
        let read = try await client.order(reference.orderID)
        guard read.ok, let order = read.decode(SwedbankPayWire.OrderAnswer.self) else {
            return Self.lost(reference, "reading the order after a failed attempt answered \(read.summary)")
        }
        if order.paymentOrder?.status == "Initialized" {
            if let view = order.operations?.named("view-paymentsession"), let session = try? await client.follow(view),
               let acknowledge = session.decode(SwedbankPayWire.SessionAnswer.self)?.operations?.named("acknowledge-failed-attempt") {
                _ = try await client.follow(acknowledge, JSONValue.object([:]))
            }
            guard let abort = order.operations?.named("abort") else { return Self.lost(reference, "the order offers no abort after a failed attempt") }
            let aborted = try await client.follow(abort, JSONValue.object(["paymentorder": .object([
                "operation": .string("Abort"), "abortReason": .string("CancelledByConsumer")])]))
            guard aborted.ok, aborted.decode(SwedbankPayWire.OrderAnswer.self)?.paymentOrder?.status == "Aborted" else {
                return Self.lost(reference, "aborting the order after a failed attempt answered \(aborted.summary)")
            }
            // Not charged only when the order itself says so: aborted (final), and nothing ever moved on it.
            let final = try await client.order(reference.orderID)
            guard final.ok, let now = final.decode(SwedbankPayWire.OrderAnswer.self)?.paymentOrder, now.status == "Aborted",
                  let moves = now.financialTransactions?.financialTransactionsList, moves.isEmpty else {
                return Self.lost(reference, "the aborted order could not be confirmed empty (\(final.summary))")
            }
        } else if order.paymentOrder?.status != "Aborted" {
            // Paid after all (a late approval): the order decides.
            return try await settle(reference, paymentId: nil, read: order)
        }
        var result = SwedbankPayProblems.result(problem, reference: reference.text, instrument: instrument)
        if let fallback { result.problem?.code = fallback }
        return result
    }

    /// continue: the payer is back (`returnParams.sbp_return`, and `cres`
    /// from 3-D Secure); the order and its session decide.
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult {
        guard let reference = SwedbankPayReference(request.providerReference) else {
            throw AdapterError.invalidRequest("providerReference is not a Swedbank Pay payment order")
        }
        do {
            if let cres = request.returnParams?["cres"], !reference.menu {
                let read = try await client.order(reference.orderID)
                if let order = read.decode(SwedbankPayWire.OrderAnswer.self), order.paymentOrder?.status == "Initialized",
                   let view = order.operations?.named("view-paymentsession"),
                   let session = try await client.follow(view).decode(SwedbankPayWire.SessionAnswer.self),
                   let complete = session.operations?.named("complete-authentication") {
                    let completed = try await client.follow(complete, JSONValue.object(["cRes": .string(cres)]))
                    if let now = completed.decode(SwedbankPayWire.SessionAnswer.self), completed.ok {
                        return try await interpret(now, reference: reference, request: request.paymentId, amount: nil, back: nil, instrument: "CreditCard")
                    }
                }
            }
            return try await settle(reference, paymentId: request.paymentId)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Swedbank Pay's order got no answer: \(error.message)")
        }
    }

    /// verify: the order as it now is.
    func verify(_ request: VerifyRequest) async throws -> AdapterResult {
        guard let text = request.providerReference else {
            // The create's answer was lost: an order may exist (and have been paid). Swedbank has no
            // search by payeeReference, so only its callback (which names the payment) can settle it.
            throw AdapterError.outcomeUnknown("Swedbank Pay: this attempt has no payment order reference (the create's answer was lost); "
                + "its callback, or a person looking up payeeReference \(Self.payeeReference(request.paymentId)), settles it")
        }
        guard let reference = SwedbankPayReference(text) else { throw AdapterError.invalidRequest("providerReference is not a Swedbank Pay payment order") }
        do {
            return try await settle(reference, paymentId: request.paymentId)
        } catch let error as HTTPEgressError {
            throw AdapterError.outcomeUnknown("Swedbank Pay's order got no answer: \(error.message)")
        }
    }

    /// The order as the host sees it. An order paid by authorization under
    /// automatic capture is captured here (once: the capture's
    /// `payeeReference` comes from the payment id, and an existing capture
    /// under it is reported, not repeated).
    func settle(_ reference: SwedbankPayReference, paymentId: String?, read: SwedbankPayWire.OrderAnswer? = nil) async throws -> AdapterResult {
        let answer: SwedbankPayWire.OrderAnswer
        if let read {
            answer = read
        } else {
            let got = try await client.order(reference.orderID)
            // A 404 too: a wrong base_url or token must not fail attempts whose orders exist.
            guard got.ok, let decoded = got.decode(SwedbankPayWire.OrderAnswer.self), decoded.paymentOrder?.status != nil else {
                throw AdapterError.outcomeUnknown("Swedbank Pay could not report the payment order: \(got.summary)")
            }
            answer = decoded
        }
        let order = answer.paymentOrder!
        let status = order.status ?? ""
        let totals = Self.totals(order)
        let amount = order.amount.map { Money(value: $0, currency: order.currency ?? "SEK") }
        switch status {
        case "Paid":
            if order.paid?.transactionType == "Sale" {
                return AdapterResult(status: .succeeded, providerReference: reference.text, amount: amount, providerStatus: "Paid", totals: totals)
            }
            guard reference.capture == .automatic else {
                return AdapterResult(status: .authorized, providerReference: reference.text, amount: amount, providerStatus: "Paid", totals: totals)
            }
            return try await captureAtOnce(answer, reference: reference, paymentId: paymentId ?? reference.orderID)
        case "Reversed":
            return AdapterResult(status: .succeeded, providerReference: reference.text, amount: amount, providerStatus: "Reversed", totals: totals)
        case "Cancelled":
            return AdapterResult(status: .cancelled, providerReference: reference.text, problem: AdapterProblem(
                code: .voided, message: "Swedbank Pay: the authorization was cancelled", retryable: false), providerStatus: "Cancelled", totals: totals)
        case "Aborted", "Failed":
            let last = order.failedAttempts?.failedAttemptList?.last
            if let type = last?.problem?.type {
                var result = SwedbankPayProblems.result(SwedbankPayWire.Problem(type: type, title: last?.problem?.title, status: nil, detail: nil, problems: nil),
                                                        reference: reference.text, instrument: last?.instrument)
                result.providerStatus = status
                return result
            }
            return AdapterResult(status: .cancelled, providerReference: reference.text, problem: AdapterProblem(
                code: .userCancelled, message: "Swedbank Pay: the payment order was \(status.lowercased()) before it was paid", retryable: true),
                providerStatus: status)
        case "Initialized":
            guard let view = answer.operations?.named("view-paymentsession") else {
                return AdapterResult(status: .pending, providerReference: reference.text, providerStatus: status)
            }
            let session = try await client.follow(view)
            guard session.ok, let now = session.decode(SwedbankPayWire.SessionAnswer.self) else {
                throw AdapterError.outcomeUnknown("Swedbank Pay could not report the payment session: \(session.summary)")
            }
            // On the menu a problem lets the payer try again on the same order.
            if reference.menu, now.problem != nil { return AdapterResult(status: .pending, providerReference: reference.text, providerStatus: status) }
            return try await interpret(now, reference: reference, request: paymentId ?? "", amount: nil, back: nil, instrument: nil, readOrder: false)
        default:
            throw AdapterError.outcomeUnknown("Swedbank Pay reported an order status this adapter does not know: \(status.prefix(40))")
        }
    }

    /// Captures what is left of an order paid by authorization.
    private func captureAtOnce(_ answer: SwedbankPayWire.OrderAnswer, reference: SwedbankPayReference, paymentId: String) async throws -> AdapterResult {
        let order = answer.paymentOrder!
        let payee = Self.payeeReference("cap" + paymentId)
        let done = (order.financialTransactions?.financialTransactionsList ?? []).contains { $0.payeeReference == payee }
        guard let remaining = order.remainingCaptureAmount else {
            throw AdapterError.outcomeUnknown("Swedbank Pay's paid order does not say what is left to capture")
        }
        if !done, remaining > 0 {
            guard let capture = answer.operations?.named("capture") else {
                throw AdapterError.outcomeUnknown("Swedbank Pay's paid order offers no capture")
            }
            let captured = try await client.follow(capture, SwedbankPayWire.Transaction3(transaction: .init(
                description: "Automatic capture", amount: remaining, vatAmount: 0, payeeReference: payee)))
            if !captured.ok {
                // A racing capture under the same payeeReference is refused: the order tells.
                let again = try await client.order(reference.orderID)
                guard let reread = again.decode(SwedbankPayWire.OrderAnswer.self),
                      (reread.paymentOrder?.financialTransactions?.financialTransactionsList ?? []).contains(where: { $0.payeeReference == payee }) else {
                    throw AdapterError.outcomeUnknown("Swedbank Pay's automatic capture answered \(captured.summary)")
                }
                return try await settled(reread, reference: reference)
            }
            guard let after = captured.decode(SwedbankPayWire.OrderAnswer.self) else {
                throw AdapterError.outcomeUnknown("Swedbank Pay's automatic capture answered an unreadable document")
            }
            let reread = try await client.order(reference.orderID)
            return try await settled(reread.decode(SwedbankPayWire.OrderAnswer.self) ?? after, reference: reference)
        }
        return try await settled(answer, reference: reference)
    }

    /// `succeeded` only when the order lists captures of its whole amount.
    private func settled(_ answer: SwedbankPayWire.OrderAnswer, reference: SwedbankPayReference) async throws -> AdapterResult {
        guard let order = answer.paymentOrder, let amount = order.amount, let currency = order.currency, let totals = Self.totals(order),
              totals.captured.value >= amount else {
            throw AdapterError.outcomeUnknown("Swedbank Pay's order does not yet list a capture of its amount")
        }
        return AdapterResult(status: .succeeded, providerReference: reference.text, amount: Money(value: amount, currency: currency),
                             providerStatus: order.status ?? "Paid", totals: totals)
    }

    /// What moved, from `financialTransactions`.
    static func totals(_ order: SwedbankPayWire.Order) -> PaymentTotals? {
        guard let list = order.financialTransactions?.financialTransactionsList, let currency = order.currency else { return nil }
        func sum(_ types: Set<String>) -> Int64 { list.filter { types.contains($0.type ?? "") }.reduce(0) { $0 + ($1.amount ?? 0) } }
        return PaymentTotals(captured: Money(value: sum(["Capture", "Sale"]), currency: currency),
                             refunded: Money(value: sum(["Reversal"]), currency: currency),
                             voided: list.contains { $0.type == "Cancellation" })
    }

    static func query(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// A callback: unsigned, so only the order it names is read (`GET`), and
    /// nothing else of its body is believed.
    func webhook(_ request: WebhookRequest) async throws -> WebhookResult {
        struct Callback: Decodable {
            struct Order: Decodable { var id: String? }
            var paymentOrder: Order?
        }
        guard let body = Data(base64Encoded: request.body), let callback = try? JSONDecoder().decode(Callback.self, from: body),
              let id = callback.paymentOrder?.id, SwedbankPayReference.isOrderID(id) else {
            return WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: "not a Swedbank Pay callback", retryable: false))
        }
        let read: SwedbankPayAnswer
        do { read = try await client.order(id, expand: "paid,financialtransactions,failedattempts,metadata") } catch let error as HTTPEgressError {
            throw AdapterError.internal("Swedbank Pay's order could not be read for the callback: \(error.message)")
        }
        guard read.ok, let answer = read.decode(SwedbankPayWire.OrderAnswer.self), let order = answer.paymentOrder else {
            return WebhookResult(verified: false, problem: AdapterProblem(
                code: .webhookUnverified, message: "Swedbank Pay does not know the order the callback names (\(read.summary))", retryable: false))
        }
        let moves = order.financialTransactions?.financialTransactionsList?.count ?? 0
        let eventId = "\(id):\(order.paid?.number ?? 0):\(order.status ?? ""):\(moves)"
        guard let paymentId = order.metadata?["gatewayPaymentId"]?.text,
              let capture = order.metadata?["gatewayCapture"]?.text.flatMap(CaptureMode.init(rawValue:)) else {
            return WebhookResult(verified: true, eventId: eventId, problem: AdapterProblem(
                code: .unknownPayment, message: "Swedbank Pay's order \(id) was not made by this gateway", retryable: false))
        }
        let menu = order.metadata?["gatewayFlow"]?.text != "native"
        let reference = SwedbankPayReference(capture: capture, menu: menu, orderID: id)
        // A callback never ends an attempt on a session problem: that is verify's, which aborts the order first.
        let result = try await settle(SwedbankPayReference(capture: capture, menu: true, orderID: id), paymentId: paymentId, read: answer)
        return WebhookResult(verified: true, eventId: eventId, paymentId: paymentId, providerReference: reference.text,
                             status: result.status, amount: result.amount, problem: result.problem)
    }
}
