import GatewayAdapterSDK

/// continue and verify: the status query and the classification of its answer.
extension HyperPayAdapter {
    /// Where the checkout's payment stands: `GET /v1/checkouts/{id}/payment`.
    func status(_ reference: HyperPayReference) async throws -> AdapterResult {
        let answer = try await query(reference)
        guard answer.status == 200, let code = answer.code else {
            throw AdapterError.outcomeUnknown("HyperPay could not report checkout \(reference.checkoutId.prefix(64)): \(answer.summary)")
        }
        return Self.classify(answer, code: code, reference: reference)
    }

    /// The status query; a lost answer leaves the outcome unknown.
    func query(_ reference: HyperPayReference) async throws -> HyperPayAnswer {
        HyperPayAnswer(try await client.exchange("GET", "/v1/checkouts/\(ProviderHTTPClient.pathSegment(reference.checkoutId))/payment",
                                                 .form([("entityId", entity(reference.kind))]), what: "status query"))
    }

    /// A payment (status answer or notification payload) as a result.
    ///
    /// Success needing review (`000.400.0x`, `000.400.100`) is `succeeded`
    /// (or `authorized` for a PA), with `providerStatus` saying review: the
    /// payment was processed and the money moved; the review is the
    /// merchant's risk check, and its code never changes by itself, so
    /// `pending` would leave the attempt being verified for ever.
    static func classify(_ payment: HyperPayAnswer, code: String, reference: HyperPayReference?) -> AdapterResult {
        let amount = payment["amount"].flatMap { text in payment["currency"].flatMap { try? Money(decimal: text, currency: $0) } }
        let kind = HyperPayResultClass(code)
        switch kind {
        case .success, .review:
            let status: PaymentStatus = payment["paymentType"] == "PA" ? .authorized : .succeeded
            return AdapterResult(status: status, providerReference: reference?.text, amount: amount,
                                 providerStatus: kind == .review ? "\(code) (review)" : code)
        case .pending, .pendingForDays:
            return AdapterResult(status: .pending, providerReference: reference?.text,
                                 providerStatus: kind == .pendingForDays ? "\(code) (pending for days)" : code)
        case .failure:
            let (status, problem) = HyperPayResultClass.failure(code, description: payment.resultDescription)
            return AdapterResult(status: status, providerReference: reference?.text, problem: problem, providerStatus: code)
        }
    }
}
