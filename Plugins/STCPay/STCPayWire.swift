import Foundation

/// STC Pay's DirectPayment V4 messages as the adapter writes and reads them:
/// PascalCase members, amounts as exact JSON numbers (`Decimal`, made from
/// the currency's decimal string, never from a `Double`).
enum STCPayWire {
    struct AuthorizeRequest: Encodable {
        var MobileNo: String
        var RefNum: String
        var BillNumber: String
        var Amount: Decimal
        var BranchID: String
        var TellerID: String
        var DeviceID: String
        var MerchantNote: String
    }

    struct AuthorizeAnswer: Decodable {
        var OtpReference: String?
        var STCPayPmtReference: String?
        var ExpiryDuration: Int?
        /// The sandbox simulator's OTP; read only when the adapter is configured `sandbox`.
        var SandboxOtpValue: String?
    }

    struct ConfirmRequest: Encodable {
        var OtpValue: String
        var OtpReference: String
        var STCPayPmtReference: String
    }

    struct ConfirmAnswer: Decodable {
        var STCPayRefNum: String?
        var Amount: Decimal?
        var PaymentStatus: Int?
        var PaymentStatusDesc: String?
    }

    struct InquiryRequest: Encodable {
        var RefNum: String
    }

    struct Transaction: Decodable {
        var RefNum: String?
        var STCPayRefNum: String?
        var Amount: Decimal?
        var PaymentStatus: Int?
        var PaymentStatusDesc: String?
    }

    struct InquiryAnswer: Decodable {
        var TransactionList: [Transaction]?
    }

    /// The refund operation (`RefundPayment`, a name from public integrations, unofficial).
    struct RefundRequest: Encodable {
        var STCPayRefNum: String
        var Amount: Decimal
        var RefNum: String
    }

    struct RefundAnswer: Decodable {
        var NewSTCPayRefNum: String?
        var Amount: Decimal?
    }

    /// `{"Code": 2031, "Text": "…"}`.
    struct Failure: Decodable {
        var Code: Int?
        var Text: String?
    }
}
