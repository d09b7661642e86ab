import Foundation

/// The answers' inner messages, PascalCase as STC Pay writes them; amounts
/// are `Decimal` so they go out as exact JSON numbers.
enum STCPayMessages {
    /// `DirectPaymentAuthorizeV4ResponseMessage`.
    struct Authorize: Encodable {
        var OtpReference: String
        var STCPayPmtReference: String
        /// Seconds the OTP stays valid.
        var ExpiryDuration: Int
        /// Not STC Pay's: the sandbox's own member carrying the OTP it "sent
        /// by SMS", so a test or a developer can type it. A real STC Pay never
        /// answers it, and the adapter reads it only when configured `sandbox`.
        var SandboxOtpValue: String
    }

    /// `DirectPaymentConfirmV4ResponseMessage`.
    struct Confirm: Encodable {
        var STCPayRefNum: String
        var Amount: Decimal
        var PaymentDate: String
        var PaymentStatus: Int
        var PaymentStatusDesc: String
    }

    /// One entry of `PaymentInquiryV4ResponseMessage.TransactionList`.
    struct Transaction: Encodable {
        var RefNum: String
        var BillNumber: String
        var MobileNo: String
        var Amount: Decimal
        var STCPayRefNum: String?
        var PaymentDate: String?
        var PaymentStatus: Int
        var PaymentStatusDesc: String
        var RefundedAmount: Decimal
    }

    /// `PaymentInquiryV4ResponseMessage`.
    struct Inquiry: Encodable {
        var TransactionList: [Transaction]
    }

    /// The refund operation's answer.
    struct Refund: Encodable {
        var NewSTCPayRefNum: String
        var STCPayRefNum: String
        var Amount: Decimal
        var RefNum: String
    }
}
