import Crypto
import Foundation
import GatewayAdapterSDK
import GatewayPayloads

/// The mock gateway's operations, over its ledger.
extension MockAdapter {
    /// - Parameter declinedWith: a decline decided before the scenario (a refused wallet token): recorded, charging nothing.
    func authorize(_ request: AuthorizeRequest, scenario: MockScenario, declinedWith refusal: AdapterProblem? = nil) throws -> AdapterResult {
        guard request.amount.value > 0 else { throw AdapterError.invalidRequest("amount.value must be positive") }
        guard request.amount.knownCurrency != nil else {
            throw AdapterError.invalidRequest("amount.currency \"\(request.amount.currency.prefix(8))\" is not a supported ISO 4217 code")
        }
        guard request.method != KnownMethod.sepaDebit.rawValue || request.amount.currency == "EUR" else {
            throw AdapterError.invalidRequest("SEPA Direct Debit is in EUR only, not \(request.amount.currency.prefix(8))")
        }
        return try withLedger { ledger in
            let key = "authorize:" + request.idempotencyKey
            let fingerprint = Self.fingerprint(request)
            if let answer = try ledger.replay(key, request: fingerprint) { return answer }
            let reference = host.randomID(prefix: "mock_")
            let settled: PaymentStatus = request.capture == .manual ? .authorized : .succeeded
            var payment = MockPayment(
                paymentId: request.paymentId, reference: reference, scenario: scenario, status: settled,
                approved: request.amount, createdAtNanoseconds: host.monotonicNanoseconds)
            switch scenario {
            case .success, .networkDrop, .timeout:
                break
            case .pendingThenSuccess:
                payment.status = .pending
            case .threeDS:
                payment.status = .pending
                var url = "https://mock.gateway.invalid/3ds/\(reference)"
                if let back = request.returnUrl?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { url += "?return=\(back)" }
                payment.action = PaymentAction(type: .threeDS, url: url, method: "GET")
            case .otp:
                payment.status = .pending
                payment.action = PaymentAction(type: .otp, otpLength: expectedOTP.count, sandboxOtp: expectedOTP)
            case .insufficientFunds:
                payment.status = .failed
                payment.problem = AdapterProblem(code: .insufficientFunds, message: "the issuer reports insufficient funds", retryable: false, providerCode: "51")
            case .cardDeclined:
                payment.status = .failed
                payment.problem = AdapterProblem(code: .cardDeclined, message: "the issuer declined the card (do not honour)", retryable: false, providerCode: "05")
            case .partialPayment:
                payment.approved.value = max(1, request.amount.value / 2)
            case .userCancelled:
                payment.status = .cancelled
                payment.problem = AdapterProblem(code: .userCancelled, message: "the payer cancelled on the provider's page", retryable: true)
            case .providerError:
                payment.status = .failed
                payment.problem = AdapterProblem(
                    code: .providerError, message: "the provider failed before processing the payment", retryable: true,
                    safeToRetryElsewhere: true, providerCode: "96")
            }
            if let refusal {
                payment.status = .failed
                payment.action = nil
                payment.problem = refusal
            }
            if payment.status == .succeeded { payment.captured = payment.approved.value }
            ledger.add(payment)
            let answer = Self.result(payment, providerStatus: scenario == .partialPayment ? "PARTIALLY_APPROVED" : nil)
            ledger.remember(answer, for: key, request: fingerprint)
            return answer
        }
    }

    func proceed(_ request: ContinueRequest) throws -> AdapterResult {
        try withLedger { ledger in
            let key = "continue:" + request.idempotencyKey
            let fingerprint = Self.fingerprint(request)
            if let answer = try ledger.replay(key, request: fingerprint) { return answer }
            guard var payment = ledger.payments[request.providerReference] else { return Self.unknown(request.providerReference) }
            guard payment.status == .pending, let action = payment.action else { return Self.result(payment) }
            var problem: AdapterProblem?
            switch action.type {
            case .otp:
                if request.otp == expectedOTP {
                    payment.status = .succeeded
                    payment.captured = payment.approved.value
                    payment.action = nil
                } else {
                    payment.otpMisses += 1
                    if payment.otpMisses >= 3 {
                        payment.status = .failed
                        payment.action = nil
                        payment.problem = AdapterProblem(code: .otpAttemptsExceeded, message: "three wrong one-time passwords", retryable: false)
                    } else {
                        problem = AdapterProblem(code: .otpInvalid, message: "wrong one-time password; \(3 - payment.otpMisses) attempts left", retryable: true)
                    }
                }
            default:
                switch request.returnParams?["outcome"] ?? request.returnParams?["sandbox_outcome"] ?? "approve" {
                case "approve":
                    payment.status = .succeeded
                    payment.captured = payment.approved.value
                    payment.action = nil
                case "decline":
                    payment.status = .failed
                    payment.action = nil
                    payment.problem = AdapterProblem(code: .authenticationFailed, message: "3-D Secure authentication failed", retryable: false, providerCode: "N")
                case "cancel":
                    payment.status = .cancelled
                    payment.action = nil
                    payment.problem = AdapterProblem(code: .userCancelled, message: "the payer cancelled 3-D Secure", retryable: true)
                default:
                    break // the payer came back without finishing: still pending, same action
                }
            }
            ledger.payments[payment.reference] = payment
            var answer = Self.result(payment)
            if let problem { answer.problem = problem }
            ledger.remember(answer, for: key, request: fingerprint)
            return answer
        }
    }

    func verify(_ request: VerifyRequest) throws -> AdapterResult {
        try withLedger { ledger in
            let found = request.providerReference.flatMap { ledger.payments[$0] }
                ?? ledger.payment(withID: request.paymentId)
            guard let payment = found else { return Self.unknown(request.providerReference ?? request.paymentId) }
            let settled = settle(payment, in: &ledger)
            var result = Self.result(settled)
            result.totals = PaymentTotals(
                captured: Money(value: settled.captured, currency: settled.approved.currency),
                refunded: Money(value: settled.refunded, currency: settled.approved.currency),
                voided: settled.problem?.code == .voided)
            return result
        }
    }

    func capture(_ request: AmountRequest) throws -> AdapterResult {
        try move(request, operation: "capture") { payment in
            guard payment.status == .authorized else {
                return AdapterProblem(code: .invalidState, message: "only an authorized payment can be captured (it is \(payment.status.rawValue))", retryable: false)
            }
            guard request.amount.value <= payment.approved.value - payment.captured else {
                return AdapterProblem(code: .amountExceedsAuthorized, message: "capture of \(request.amount.value) exceeds the \(payment.approved.value - payment.captured) left", retryable: false)
            }
            payment.captured += request.amount.value
            if payment.captured == payment.approved.value { payment.status = .succeeded }
            return nil
        }
    }

    func refund(_ request: AmountRequest) throws -> AdapterResult {
        try move(request, operation: "refund") { payment in
            guard payment.captured > 0 else {
                return AdapterProblem(code: .invalidState, message: "nothing has been captured", retryable: false)
            }
            guard request.amount.value <= payment.captured - payment.refunded else {
                return AdapterProblem(code: .amountExceedsCaptured, message: "refund of \(request.amount.value) exceeds the \(payment.captured - payment.refunded) left", retryable: false)
            }
            payment.refunded += request.amount.value
            return nil
        }
    }

    func void(_ request: VoidRequest) throws -> AdapterResult {
        try withLedger { ledger in
            let key = "void:" + request.idempotencyKey
            let fingerprint = Self.fingerprint(request)
            if let answer = try ledger.replay(key, request: fingerprint) { return answer }
            guard var payment = ledger.payments[request.providerReference] else { return Self.unknown(request.providerReference) }
            let answer: AdapterResult
            if payment.status == .authorized, payment.captured == 0 {
                payment.status = .cancelled
                payment.problem = AdapterProblem(code: .voided, message: "the authorization was voided by the merchant", retryable: false)
                ledger.payments[payment.reference] = payment
                answer = AdapterResult(status: .succeeded, providerReference: payment.reference, amount: payment.approved, providerStatus: "VOIDED")
            } else {
                answer = AdapterResult(
                    status: .failed, providerReference: payment.reference,
                    problem: AdapterProblem(code: .invalidState, message: "only an uncaptured authorization can be voided (it is \(payment.status.rawValue))", retryable: false))
            }
            ledger.remember(answer, for: key, request: fingerprint)
            return answer
        }
    }

    /// Verifies `x-mock-signature: hex(HMAC-SHA256(secret webhook_secret, body))`
    /// over a body `{"eventId": ..., "providerReference": ..., "status": ...}`.
    func webhook(_ request: WebhookRequest) throws -> WebhookResult {
        func refused(_ message: String) -> WebhookResult {
            WebhookResult(verified: false, problem: AdapterProblem(code: .webhookUnverified, message: message, retryable: false))
        }
        guard let body = Data(base64Encoded: request.body) else { return refused("the body is not base64") }
        // An empty key would make every signature computable by anyone: refused like a missing one.
        guard var secret = host.secret("webhook_secret"), !secret.isEmpty else {
            return refused("no webhook_secret is configured, so no notification can be verified")
        }
        defer { for i in secret.indices { secret[i] = 0 } }
        guard let signature = request.headers["x-mock-signature"], let given = Data(hexString: signature) else {
            return refused("missing or malformed x-mock-signature header")
        }
        guard HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: body, using: SymmetricKey(data: secret)) else {
            return refused("the signature does not match")
        }
        struct Notification: Decodable {
            var eventId: String
            var providerReference: String
        }
        guard let notification = try? JSONDecoder().decode(Notification.self, from: body) else {
            return refused("the body is not a mock notification")
        }
        return try withLedger { ledger in
            guard let payment = ledger.payments[notification.providerReference].map({ settle($0, in: &ledger) }) else {
                return WebhookResult(verified: true, eventId: notification.eventId, providerReference: notification.providerReference,
                                     problem: AdapterProblem(code: .unknownPayment, message: "no such payment", retryable: false))
            }
            // The notification only says "look again": the state comes from the ledger, as a verify would.
            return WebhookResult(verified: true, eventId: notification.eventId, paymentId: payment.paymentId,
                                 providerReference: payment.reference, status: payment.status, amount: payment.approved)
        }
    }

    // MARK: Helpers

    /// The provider status of a completed follow-up operation.
    static let doneStatus = ["capture": "CAPTURED", "refund": "REFUNDED", "void": "VOIDED"]

    /// A `pending_then_success` payment settles once its time has come, as
    /// whoever looks first (a verify or a notification) finds.
    private func settle(_ payment: MockPayment, in ledger: inout MockLedger) -> MockPayment {
        var payment = payment
        let age = host.monotonicNanoseconds &- payment.createdAtNanoseconds
        if payment.scenario == .pendingThenSuccess, payment.status == .pending, age >= UInt64(settleAfterMilliseconds) * 1_000_000 {
            payment.status = .succeeded
            payment.captured = payment.approved.value
            ledger.payments[payment.reference] = payment
        }
        return payment
    }

    private func move(_ request: AmountRequest, operation: String, apply: (inout MockPayment) -> AdapterProblem?) throws -> AdapterResult {
        try withLedger { ledger in
            let key = "\(operation):" + request.idempotencyKey
            let fingerprint = Self.fingerprint(request)
            if let answer = try ledger.replay(key, request: fingerprint) { return answer }
            guard var payment = ledger.payments[request.providerReference] else { return Self.unknown(request.providerReference) }
            let answer: AdapterResult
            if request.amount.currency != payment.approved.currency {
                answer = AdapterResult(status: .failed, providerReference: payment.reference,
                                       problem: AdapterProblem(code: .currencyMismatch, message: "the payment is in \(payment.approved.currency)", retryable: false))
            } else if request.amount.value <= 0 {
                answer = AdapterResult(status: .failed, providerReference: payment.reference,
                                       problem: AdapterProblem(code: .invalidAmount, message: "amount must be positive", retryable: false))
            } else if let problem = apply(&payment) {
                answer = AdapterResult(status: .failed, providerReference: payment.reference, problem: problem)
            } else {
                ledger.payments[payment.reference] = payment
                answer = AdapterResult(status: .succeeded, providerReference: payment.reference + "_" + operation + "_" + host.randomID(prefix: ""),
                                       amount: request.amount, providerStatus: Self.doneStatus[operation] ?? operation.uppercased())
            }
            ledger.remember(answer, for: key, request: fingerprint)
            return answer
        }
    }

    static func result(_ payment: MockPayment, providerStatus: String? = nil) -> AdapterResult {
        AdapterResult(
            status: payment.status, providerReference: payment.reference,
            amount: payment.status == .failed || payment.status == .cancelled ? nil : payment.approved,
            action: payment.status == .pending ? payment.action : nil, problem: payment.problem,
            providerStatus: providerStatus ?? payment.status.rawValue.uppercased())
    }

    static func unknown(_ reference: String) -> AdapterResult {
        AdapterResult(status: .failed, problem: AdapterProblem(code: .unknownPayment, message: "the mock gateway has no payment \(reference.prefix(64))", retryable: false))
    }
    /// What identifies a request under its idempotency key: the SHA-256 of
    /// its canonical JSON (the payload writer sorts every object's members).
    static func fingerprint(_ request: some JSONPayload) -> String {
        Hex.lowercase(SHA256.hash(data: request.jsonBytes()))
    }
}

extension Data {
    /// Bytes from an even-length hex string.
    init?(hexString: String) {
        var bytes: [UInt8] = []
        var iterator = hexString.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = Self.nibble(high), let l = Self.nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        self.init(bytes)
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
