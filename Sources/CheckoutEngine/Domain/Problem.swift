import GatewayPayloads
import PaymentFields

/// A failure a person can act on: an RFC 9457 problem with a stable `type`,
/// a `retryable` flag, a detail for the engineer and a message for the payer
/// in English and Arabic. Card data and secrets never appear in any field.
public struct Problem: Error, Sendable, Equatable {
    /// A stable URI naming the kind of problem (RFC 9457 `type`).
    public var type: String
    public var title: String
    /// The HTTP status an API would answer with.
    public var status: Int
    /// For the engineer: what happened, specifically.
    public var detail: String
    /// Whether trying again (later, or with the same method) may succeed.
    public var retryable: Bool
    /// The stable code (`insufficient_funds`, ...); on the wire its raw string.
    public var code: ProblemCode
    /// What to show the payer.
    public var payerMessage: PayerMessage
    /// The provider's own code, for support.
    public var providerCode: String?
    /// The member of the request that was wrong, when one was
    /// (`instrument.msisdn`): a client shows the message beside that field.
    public var field: String?
    /// `invalid_fields`: one problem per field of the method's form that was
    /// not filled right (docs/fields.md); the payer fixes each.
    public var problems: [FieldProblem]? = nil

    /// One field's problem: its id (a dotted path into the instrument), the
    /// rule it broke, and what to tell the payer. Never the value.
    public struct FieldProblem: Sendable, Equatable {
        public var field: String
        public var code: String
        public var payerMessage: PayerMessage

        public init(field: String, code: String, payerMessage: PayerMessage) {
            self.field = field
            self.code = code
            self.payerMessage = payerMessage
        }
    }

    public struct PayerMessage: Sendable, Equatable {
        public var en: String
        public var ar: String
    }
}

/// The problems the engine knows, by code. An adapter's problem with a code
/// not listed here keeps its code and detail and gets the generic payer message.
public enum ProblemCatalog {
    public static let typeBase = "https://gateway.dev/problems/"

    struct Entry {
        var title: String
        var status: Int
        var retryable: Bool
        var en: String
        var ar: String
    }

    static let entries: [ProblemCode: Entry] = [
        .insufficientFunds: Entry(
            title: "Insufficient funds", status: 402, retryable: false,
            en: "Your payment was declined for insufficient funds. Please use another card or payment method.",
            ar: "تم رفض الدفع لعدم كفاية الرصيد. يرجى استخدام بطاقة أو وسيلة دفع أخرى."),
        .cardDeclined: Entry(
            title: "Card declined", status: 402, retryable: false,
            en: "Your card was declined. Please use another card or payment method.",
            ar: "تم رفض بطاقتك. يرجى استخدام بطاقة أو وسيلة دفع أخرى."),
        .authenticationFailed: Entry(
            title: "Authentication failed", status: 402, retryable: false,
            en: "Your bank could not verify this payment. Please try again or use another card.",
            ar: "تعذّر على البنك التحقق من عملية الدفع. يرجى المحاولة مرة أخرى أو استخدام بطاقة أخرى."),
        .fraudDetected: Entry(
            title: "Declined as a precaution", status: 402, retryable: false,
            en: "Your bank declined this payment as a security precaution. Please contact your bank or use another payment method.",
            ar: "رفض البنك عملية الدفع هذه كإجراء أمني. يرجى التواصل مع البنك أو استخدام وسيلة دفع أخرى."),
        .invalidFields: Entry(
            title: "Some fields are not valid", status: 422, retryable: true,
            en: "Some details are not valid. Please check the highlighted fields.",
            ar: "بعض البيانات غير صحيحة. يرجى التحقق من الحقول المحددة."),
        .cardExpired: Entry(
            title: "Card expired", status: 402, retryable: false,
            en: "Your card has expired. Please use another card.",
            ar: "انتهت صلاحية بطاقتك. يرجى استخدام بطاقة أخرى."),
        .invalidCardDetails: Entry(
            title: "Card details not valid", status: 422, retryable: true,
            en: "Some card details are not valid. Please check them and try again.",
            ar: "بعض بيانات البطاقة غير صحيحة. يرجى التحقق منها والمحاولة مرة أخرى."),
        .appLaunchFailed: Entry(
            title: "Payment app did not open", status: 402, retryable: true,
            en: "The payment app could not be opened on this device. Please try again, or pay with the app on another phone.",
            ar: "تعذّر فتح تطبيق الدفع على هذا الجهاز. يرجى المحاولة مرة أخرى، أو الدفع باستخدام التطبيق على هاتف آخر."),
        .walletDeclined: Entry(
            title: "Declined by the payment app", status: 402, retryable: false,
            en: "Your payment app declined this payment, possibly because of a limit or your balance. Please check the app or use another payment method.",
            ar: "رفض تطبيق الدفع هذه العملية، ربما بسبب حدّ أو رصيد غير كافٍ. يرجى التحقق من التطبيق أو استخدام وسيلة دفع أخرى."),
        .invalidPhoneNumber: Entry(
            title: "Phone number not usable", status: 422, retryable: true,
            en: "This mobile number cannot be used for this payment. Please enter it with the country code, for example +46 70 123 45 67.",
            ar: "لا يمكن استخدام رقم الجوال هذا لعملية الدفع. يرجى إدخاله مع رمز الدولة، مثل ‎+46 70 123 45 67."),
        .otpInvalid: Entry(
            title: "Wrong one-time password", status: 402, retryable: true,
            en: "The code you entered is incorrect. Please check it and try again.",
            ar: "الرمز الذي أدخلته غير صحيح. يرجى التحقق منه والمحاولة مرة أخرى."),
        .otpAttemptsExceeded: Entry(
            title: "Too many wrong one-time passwords", status: 402, retryable: false,
            en: "Too many incorrect codes. Please start the payment again.",
            ar: "تم إدخال رموز غير صحيحة عدة مرات. يرجى بدء عملية الدفع من جديد."),
        .userCancelled: Entry(
            title: "Cancelled by the payer", status: 402, retryable: true,
            en: "You cancelled the payment. You can try again with any payment method.",
            ar: "لقد ألغيت عملية الدفع. يمكنك المحاولة مرة أخرى بأي وسيلة دفع."),
        .bnplDeclined: Entry(
            title: "Instalment plan not approved", status: 402, retryable: false,
            en: "Your instalment plan was not approved. Please choose another payment method.",
            ar: "لم تتم الموافقة على خطة التقسيط. يرجى اختيار وسيلة دفع أخرى."),
        .expired: Entry(
            title: "Payment approval expired", status: 410, retryable: false,
            en: "The time to approve this payment has run out. Please start the payment again.",
            ar: "انتهت مهلة الموافقة على عملية الدفع. يرجى بدء عملية الدفع من جديد."),
        .voided: Entry(
            title: "Payment voided", status: 409, retryable: false,
            en: "This payment was cancelled by the merchant. You have not been charged.",
            ar: "ألغى التاجر عملية الدفع هذه. لم يتم خصم أي مبلغ منك."),
        .unknownPayment: Entry(
            title: "Payment unknown to the provider", status: 404, retryable: false,
            en: "This payment could not be found. Please start again.",
            ar: "تعذّر العثور على عملية الدفع هذه. يرجى البدء من جديد."),
        .amountExceedsAuthorized: Entry(
            title: "Amount exceeds the authorization", status: 422, retryable: false,
            en: "This amount is more than was authorised for this payment.",
            ar: "هذا المبلغ أكبر من المبلغ المصرّح به لعملية الدفع هذه."),
        .amountExceedsCaptured: Entry(
            title: "Amount exceeds what was captured", status: 422, retryable: false,
            en: "This refund is more than what was paid and not yet refunded.",
            ar: "مبلغ الاسترداد هذا أكبر من المبلغ المدفوع غير المسترد."),
        .currencyMismatch: Entry(
            title: "Currency mismatch", status: 422, retryable: false,
            en: "This amount is not in the currency of the payment.",
            ar: "هذا المبلغ ليس بعملة عملية الدفع."),
        .invalidAmount: Entry(
            title: "Invalid amount", status: 422, retryable: false,
            en: "This amount is not valid for this payment.",
            ar: "هذا المبلغ غير صالح لعملية الدفع هذه."),
        .providerError: Entry(
            title: "Payment provider error", status: 502, retryable: true,
            en: "The payment service is temporarily unavailable. Please try again in a moment.",
            ar: "خدمة الدفع غير متاحة مؤقتاً. يرجى المحاولة مرة أخرى بعد قليل."),
        .networkError: Entry(
            title: "Payment outcome not yet known", status: 504, retryable: false,
            en: "We could not confirm your payment yet. Please do not pay again: we will confirm it shortly.",
            ar: "لم نتمكن من تأكيد عملية الدفع بعد. يرجى عدم الدفع مرة أخرى، وسنؤكدها لك قريباً."),
        .paymentFailed: Entry(
            title: "Payment failed", status: 402, retryable: false,
            en: "Your payment could not be completed. Please try another payment method.",
            ar: "تعذّر إتمام عملية الدفع. يرجى تجربة وسيلة دفع أخرى."),
        // Problems with a request rather than with a payment.
        .notFound: Entry(
            title: "Not found", status: 404, retryable: false,
            en: "This payment could not be found. Please start again.",
            ar: "تعذّر العثور على عملية الدفع هذه. يرجى البدء من جديد."),
        .idempotencyConflict: Entry(
            title: "Idempotency key reused", status: 409, retryable: false,
            en: "This request was already made with different details. Please start again.",
            ar: "تم إرسال هذا الطلب سابقاً بتفاصيل مختلفة. يرجى البدء من جديد."),
        .invalidRequest: Entry(
            title: "Invalid request", status: 422, retryable: false,
            en: "Something in this payment request is not valid. Please check the details and try again.",
            ar: "بعض بيانات طلب الدفع غير صالحة. يرجى التحقق منها والمحاولة مرة أخرى."),
        .invalidState: Entry(
            title: "Not allowed now", status: 409, retryable: false,
            en: "This payment cannot be changed in this way now.",
            ar: "لا يمكن تعديل عملية الدفع بهذه الطريقة الآن."),
        .methodUnavailable: Entry(
            title: "Payment method unavailable", status: 422, retryable: false,
            en: "This payment method is not available for this payment. Please choose another one.",
            ar: "وسيلة الدفع هذه غير متاحة لهذه العملية. يرجى اختيار وسيلة أخرى."),
        .sessionExpired: Entry(
            title: "Checkout expired", status: 410, retryable: false,
            en: "This checkout has expired. Please start again.",
            ar: "انتهت صلاحية عملية الدفع. يرجى البدء من جديد."),
        .webhookUnverified: Entry(
            title: "Notification not verified", status: 401, retryable: false,
            en: "This notification could not be verified.",
            ar: "تعذّر التحقق من هذا الإشعار."),
        // Problems of an HTTP request itself (the checkout API).
        .malformedRequest: Entry(
            title: "Malformed request", status: 400, retryable: false,
            en: "Something went wrong with this request. Please try again.",
            ar: "حدث خطأ في هذا الطلب. يرجى المحاولة مرة أخرى."),
        .unauthorized: Entry(
            title: "Unauthorized", status: 401, retryable: false,
            en: "This request is not authorised.",
            ar: "هذا الطلب غير مصرّح به."),
        .methodNotAllowed: Entry(
            title: "Method not allowed", status: 405, retryable: false,
            en: "Something went wrong with this request. Please try again.",
            ar: "حدث خطأ في هذا الطلب. يرجى المحاولة مرة أخرى."),
        .payloadTooLarge: Entry(
            title: "Request body too large", status: 413, retryable: false,
            en: "Something went wrong with this request. Please try again.",
            ar: "حدث خطأ في هذا الطلب. يرجى المحاولة مرة أخرى."),
        .unsupportedMediaType: Entry(
            title: "Unsupported media type", status: 415, retryable: false,
            en: "Something went wrong with this request. Please try again.",
            ar: "حدث خطأ في هذا الطلب. يرجى المحاولة مرة أخرى."),
        .internalError: Entry(
            title: "Internal error", status: 500, retryable: true,
            en: "Something went wrong on our side. Please try again in a moment.",
            ar: "حدث خطأ من جانبنا. يرجى المحاولة مرة أخرى بعد قليل."),
        .storeUnavailable: Entry(
            title: "Payment store unavailable", status: 503, retryable: true,
            en: "The payment service is temporarily unavailable. Please try again in a moment.",
            ar: "خدمة الدفع غير متاحة مؤقتاً. يرجى المحاولة مرة أخرى بعد قليل."),
        .operationInProgress: Entry(
            title: "Another operation is being settled", status: 409, retryable: true,
            en: "This payment is being updated. Please try again in a moment.",
            ar: "يجري تحديث عملية الدفع هذه. يرجى المحاولة مرة أخرى بعد قليل."),
        .outcomeUnknown: Entry(
            title: "Outcome not yet known", status: 504, retryable: true,
            en: "We could not confirm this operation yet. Please try again with the same request.",
            ar: "لم نتمكن من تأكيد هذه العملية بعد. يرجى إعادة المحاولة بنفس الطلب."),
    ]

    /// What a code the gateway does not know gets: an adapter's own code
    /// (``ProblemCode/isCatalogued`` false) keeps its code, detail and
    /// retryable flag, with this title, status and the generic payer message.
    static let adapterOwnCode = Entry(
        title: "Payment failed", status: 402, retryable: false,
        en: "Your payment could not be completed. Please try another payment method.",
        ar: "تعذّر إتمام عملية الدفع. يرجى تجربة وسيلة دفع أخرى.")

    /// The codes with their own entry.
    public static var knownCodes: [String] { entries.keys.map(\.rawValue).sorted() }

    /// The problem for `code`, with `detail` for the engineer. A code
    /// without an entry (an adapter's own) gets ``adapterOwnCode``'s.
    public static func problem(code: ProblemCode, detail: String, retryable: Bool? = nil, providerCode: String? = nil, field: String? = nil) -> Problem {
        let entry = entries[code] ?? adapterOwnCode
        return Problem(
            type: typeBase + code.rawValue.replacingOccurrences(of: "_", with: "-"), title: entry.title,
            status: entry.status, detail: detail, retryable: retryable ?? entry.retryable, code: code,
            payerMessage: Problem.PayerMessage(en: entry.en, ar: entry.ar), providerCode: providerCode, field: field)
    }

    /// `invalid_fields` for `issues` (``FieldValidation``), one problem per field.
    public static func invalidFields(_ issues: [FieldIssue], method: String, path: String) -> Problem {
        var problem = problem(code: .invalidFields, detail: "\(issues.count) field(s) of \(method)'s form not filled right: "
            + issues.map { "\(path)\($0.field) (\($0.code))" }.joined(separator: ", ") + "; no provider was called")
        problem.problems = issues.map { Problem.FieldProblem(field: path + $0.field, code: $0.code, payerMessage: Problem.PayerMessage(en: $0.en, ar: $0.ar)) }
        return problem
    }

    /// A transition the domain refused, as a problem for the caller.
    public static func problem(from error: DomainError) -> Problem {
        switch error {
        case .unknownAttempt: problem(code: .notFound, detail: error.description)
        case .sessionNotOpen(.expired): problem(code: .sessionExpired, detail: error.description)
        case .nonPositiveAmount, .currencyMismatch, .exceedsAuthorized, .exceedsCaptured:
            problem(code: .invalidRequest, detail: error.description)
        default: problem(code: .invalidState, detail: error.description)
        }
    }

    /// An adapter's problem, as the engine reports it: the adapter's code,
    /// retryable flag and provider code are kept; `providerID` is named in
    /// the detail, and so is a code the gateway does not know.
    public static func problem(from adapter: AdapterProblem, providerID: String) -> Problem {
        // Never silently generic: the detail says the code is the adapter's own.
        let own = adapter.code.isCatalogued ? "" : " (\(adapter.code) is \(providerID)'s own code, not one the gateway knows: the payer is shown the generic message)"
        return problem(code: adapter.code, detail: "\(providerID): \(adapter.message)" + own, retryable: adapter.retryable, providerCode: adapter.providerCode,
                field: adapter.field)
    }
}

extension Problem: CustomStringConvertible {
    public var description: String { "\(code): \(detail)" }
}
