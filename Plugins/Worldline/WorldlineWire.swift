import Foundation
import GatewayAdapterSDK

/// Worldline Direct's JSON documents, as far as this adapter reads or sends
/// them (field names as the API spells them).
enum WorldlineWire {
    struct AmountOfMoney: Codable, Sendable {
        var amount: Int64?
        var currencyCode: String?
    }

    // MARK: Requests

    struct CreatePayment: Encodable, Sendable {
        struct Order: Encodable, Sendable {
            struct References: Encodable, Sendable { var merchantReference: String }
            var amountOfMoney: AmountOfMoney
            var references: References
        }
        struct CardInput: Encodable, Sendable {
            struct ThreeDSecure: Encodable, Sendable {
                struct Redirection: Encodable, Sendable { var returnUrl: String }
                var redirectionData: Redirection
            }
            var authorizationMode: String
            var token: String?
            var paymentProductId: Int?
            var threeDSecure: ThreeDSecure
        }
        struct Feedbacks: Encodable, Sendable { var webhooksUrls: [String] }
        var order: Order
        var encryptedCustomerInput: String?
        var cardPaymentMethodSpecificInput: CardInput
        var feedbacks: Feedbacks?
    }

    struct Capture: Encodable, Sendable {
        var amount: Int64
        var isFinal: Bool
    }

    struct Refund: Encodable, Sendable {
        var amountOfMoney: AmountOfMoney
    }

    // MARK: Answers

    struct APIError: Decodable, Sendable {
        var errorCode: String?
        var code: String?
        var id: String?
        var category: String?
        var message: String?
        var propertyName: String?
        var httpStatusCode: Int?
    }

    struct StatusOutput: Decodable, Sendable {
        var statusCode: Int?
        var statusCategory: String?
        var isAuthorized: Bool?
        var isCancellable: Bool?
        var errors: [APIError]?
    }

    struct Payment: Decodable, Sendable {
        struct Output: Decodable, Sendable {
            struct References: Decodable, Sendable { var merchantReference: String? }
            struct Card: Decodable, Sendable {
                struct Details: Decodable, Sendable { var cardNumber: String? }
                var paymentProductId: Int?
                var card: Details?
            }
            var amountOfMoney: AmountOfMoney?
            var references: References?
            var cardPaymentMethodSpecificOutput: Card?
        }
        /// One capture or refund on `/details`.
        struct Operation: Decodable, Sendable {
            var id: String?
            var status: String?
            var amountOfMoney: AmountOfMoney?
        }
        var id: String?
        var status: String?
        var statusOutput: StatusOutput?
        var paymentOutput: Output?
        // `/details` spells it with a capital O.
        var operations: [Operation]?

        enum CodingKeys: String, CodingKey {
            case id, status, statusOutput, paymentOutput
            case operations = "Operations"
        }
    }

    struct MerchantAction: Decodable, Sendable {
        struct RedirectData: Decodable, Sendable {
            var redirectURL: String?
            var RETURNMAC: String?
        }
        var actionType: String?
        var redirectData: RedirectData?
    }

    struct CreateAnswer: Decodable, Sendable {
        var payment: Payment?
        var merchantAction: MerchantAction?
    }

    /// An error answer; a decline (402) also carries the rejected payment.
    struct ErrorAnswer: Decodable, Sendable {
        struct Result: Decodable, Sendable { var payment: Payment? }
        var errorId: String?
        var errors: [APIError]?
        var paymentResult: Result?
    }

    /// The answer of a capture or a refund.
    struct OperationAnswer: Decodable, Sendable {
        var id: String?
        var status: String?
        var statusOutput: StatusOutput?
    }

    struct SessionAnswer: Decodable, Sendable {
        var clientSessionId: String?
        var customerId: String?
        var clientApiUrl: String?
        var assetUrl: String?
    }

    /// A webhook event: only its id, type and payment id are read; the
    /// payment itself is fetched again.
    struct Event: Decodable, Sendable {
        struct PaymentID: Decodable, Sendable { var id: String? }
        var apiVersion: String?
        var id: String?
        var type: String?
        var merchantId: String?
        var payment: PaymentID?
    }
}
