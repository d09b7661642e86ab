import Foundation

/// A refund of a paid STC Pay payment, under the merchant's reference.
struct STCPayRefund: Sendable {
    var reference: String
    var halalas: Int64
    var stcPayRefNum: String
}

/// One `DirectPaymentAuthorize`: the OTP "sent by SMS" to `mobile`, how many
/// wrong tries are left, when it expires, and where the payment stands
/// (PaymentStatus 1 pending, 2 paid, 4 cancelled, 5 expired).
struct STCPayPayment: Sendable {
    var otpReference: String
    var pmtReference: String
    var refNum: String
    var billNumber: String
    var mobile: String
    var halalas: Int64
    var otp: String
    var attemptsLeft: Int
    var expiresAt: Date
    var status = 1
    var stcPayRefNum: String?
    var paidAt: Date?
    var refunds: [STCPayRefund] = []

    /// Wrong OTPs allowed before the OTP is burned.
    static let attempts = 3

    var statusDescription: String {
        switch status {
        case 1: "Pending"
        case 2: "Paid"
        case 4: "Cancelled"
        default: "Expired"
        }
    }

    var refunded: Int64 { refunds.reduce(0) { $0 + $1.halalas } }

    /// The entry of a `PaymentInquiry` answer's `TransactionList`.
    var transaction: STCPayMessages.Transaction {
        STCPayMessages.Transaction(
            RefNum: refNum, BillNumber: billNumber, MobileNo: mobile, Amount: STCPayWire.amount(halalas),
            STCPayRefNum: stcPayRefNum, PaymentDate: paidAt.map(STCPayWire.timestamp),
            PaymentStatus: status, PaymentStatusDesc: statusDescription,
            RefundedAmount: STCPayWire.amount(refunded))
    }
}

/// Everything the simulator remembers.
struct STCPayState: Sendable {
    /// By `STCPayPmtReference`.
    var payments: [String: STCPayPayment] = [:]
    /// `RefNum` → the `STCPayPmtReference`s authorized under it, oldest first.
    var byRefNum: [String: [String]] = [:]
    var charges = 0
    var counter = 0

    /// The payment, with expiry applied: a pending one past its expiry turns 5.
    mutating func payment(_ pmtReference: String, now: Date = Date()) -> STCPayPayment? {
        guard var payment = payments[pmtReference] else { return nil }
        if payment.status == 1, now >= payment.expiresAt {
            payment.status = 5
            payments[pmtReference] = payment
        }
        return payment
    }

    /// The payments authorized under `refNum`, expiry applied, oldest first.
    mutating func payments(refNum: String) -> [STCPayPayment] {
        (byRefNum[refNum] ?? []).compactMap { payment($0) }
    }

    mutating func add(_ payment: STCPayPayment) {
        payments[payment.pmtReference] = payment
        byRefNum[payment.refNum, default: []].append(payment.pmtReference)
    }

    /// A new numeric reference, unique within this simulator.
    mutating func nextReference() -> String {
        counter += 1
        return String(1_000_000_000 + counter * 7919 % 1_000_000_000)
    }
}
