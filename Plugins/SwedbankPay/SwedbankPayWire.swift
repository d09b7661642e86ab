import Foundation

/// Swedbank Pay's documents as the adapter reads and writes them (Checkout
/// v3, `application/json;version=3.1`). Readers are lenient: every member is
/// optional, and what the adapter needs is checked where it is used.
enum SwedbankPayWire {
    /// One entry of `operations[]`: follow `href` with `method`, chosen by `rel`.
    struct Operation: Codable, Sendable {
        var rel: String?
        var href: String?
        var method: String?
        var tasks: [Task]?
    }

    /// A task of a session operation (`launch-client-app`, `sca-redirect`).
    struct Task: Codable, Sendable {
        var rel: String?
        var href: String?
        var method: String?
        var expects: [Expectation]?
    }

    struct Expectation: Codable, Sendable {
        var name: String?
        var value: String?
    }

    /// `{"paymentOrder": …, "operations": […]}`.
    struct OrderAnswer: Decodable, Sendable {
        var paymentOrder: Order?
        var operations: [Operation]?
    }

    struct Order: Decodable, Sendable {
        var id: String?
        var status: String?
        var currency: String?
        var amount: Int64?
        var remainingCaptureAmount: Int64?
        var remainingCancellationAmount: Int64?
        var remainingReversalAmount: Int64?
        var paid: Paid?
        var financialTransactions: Transactions?
        var failedAttempts: FailedAttempts?
        var metadata: [String: MetadataValue]?
    }

    struct Paid: Decodable, Sendable {
        var instrument: String?
        var transactionType: String?
        var number: Int64?
    }

    struct Transactions: Decodable, Sendable {
        var financialTransactionsList: [Transaction]?
    }

    struct Transaction: Decodable, Sendable {
        var type: String?
        var amount: Int64?
        var payeeReference: String?
    }

    struct FailedAttempts: Decodable, Sendable {
        var failedAttemptList: [FailedAttempt]?
    }

    struct FailedAttempt: Decodable, Sendable {
        var instrument: String?
        var problem: ProblemRef?
    }

    struct ProblemRef: Decodable, Sendable {
        var type: String?
        var title: String?
    }

    /// A metadata member: Swedbank echoes strings; the `id` link is a string too.
    struct MetadataValue: Decodable, Sendable {
        var text: String?
        init(from decoder: any Decoder) throws {
            text = try? decoder.singleValueContainer().decode(String.self)
        }
    }

    /// `{"paymentSession": …, "operations": […], "problem"?: …}`.
    struct SessionAnswer: Decodable, Sendable {
        var paymentSession: Session?
        var operations: [Operation]?
        var problem: Problem?
    }

    struct Session: Decodable, Sendable {
        var methods: [Method]?
        var urls: SessionURLs?
    }

    struct SessionURLs: Decodable, Sendable {
        var completeUrl: String?
        var cancelUrl: String?
    }

    struct Method: Decodable, Sendable {
        var paymentMethod: String?
        var prefills: [Prefill]?
        var operations: [Operation]?
    }

    struct Prefill: Decodable, Sendable {
        var rank: Int?
        var msisdn: String?
        var paymentToken: String?
        var cardBrand: String?
        var maskedPan: String?
        var expiryDate: String?
    }

    /// An RFC 7807 problem (`type`, `title`, `status`, `detail`, `problems[]`).
    struct Problem: Decodable, Sendable {
        var type: String?
        var title: String?
        var status: Int?
        var detail: String?
        var problems: [Item]?

        struct Item: Decodable, Sendable {
            var name: String?
            var description: String?
        }

        /// The last segment of `type`, lower-cased: what the mapping reads.
        var name: String { (type ?? "").split(separator: "/").last.map { $0.lowercased() } ?? "" }
    }

    // MARK: Requests

    struct Create: Encodable, Sendable {
        var paymentorder: PaymentOrder
    }

    struct PaymentOrder: Encodable, Sendable {
        var operation = "Purchase"
        var currency: String
        var amount: Int64
        var vatAmount: Int64 = 0
        var description: String
        var userAgent: String
        var language: String
        var productName = "Checkout3"
        var generatePaymentToken: Bool
        var urls: URLs
        var payeeInfo: PayeeInfo
        var payer: Payer?
        var orderItems: [OrderItem]
        var metadata: [String: String]
    }

    struct URLs: Encodable, Sendable {
        var hostUrls: [String]
        var completeUrl: String
        var cancelUrl: String
        var callbackUrl: String?
        var termsOfServiceUrl: String?
    }

    struct PayeeInfo: Encodable, Sendable {
        var payeeId: String
        var payeeReference: String
        var payeeName: String?
        var orderReference: String
    }

    struct Payer: Encodable, Sendable {
        var payerReference: String
    }

    struct OrderItem: Encodable, Sendable {
        var reference: String
        var name: String
        var type = "PRODUCT"
        var `class` = "Order"
        var quantity = 1
        var quantityUnit = "pcs"
        var unitPrice: Int64
        var vatPercent = 0
        var amount: Int64
        var vatAmount: Int64 = 0
    }

    struct Transaction3: Encodable, Sendable {
        var transaction: Body
        struct Body: Encodable, Sendable {
            var description: String
            var amount: Int64?
            var vatAmount: Int64?
            var payeeReference: String
        }
    }
}

extension Array where Element == SwedbankPayWire.Operation {
    /// The operation `rel`, if offered.
    func named(_ rel: String) -> SwedbankPayWire.Operation? { first { $0.rel == rel } }
}
