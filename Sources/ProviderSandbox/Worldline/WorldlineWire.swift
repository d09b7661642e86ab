import Foundation
import Hummingbird
import NIOCore

/// An answer before it is sent: what an idempotent replay answers again.
struct WorldlineAnswer: Sendable {
    var status: Int
    var body: String
    /// `Location`: the created resource's URL, on a 201.
    var location: String?

    init(_ status: Int, _ document: [String: Any], location: String? = nil) {
        self.status = status
        self.body = SimulatorJSON.text(document)
        self.location = location
    }

    var response: Response {
        var response = SimulatorJSON.response(HTTPResponse.Status(code: status), body)
        if let location { response.headers[.location] = location }
        return response
    }
}

/// Worldline Direct's documents as the simulator writes them: payments
/// (`PaymentResponse`, with `statusOutput` and `paymentOutput`), payment
/// details with their `Operations` (a capital O, as Worldline's SDKs
/// serialise it), and error lists `{"errorId", "errors": [APIError]}`. Field
/// names are those of Worldline's Java SDK domain classes.
enum WorldlineWire {
    /// One `APIError`. `code` (the legacy field) repeats `errorCode`.
    struct Issue: Sendable, Equatable {
        var errorCode: String
        var id: String
        var category = "DIRECT_PLATFORM_ERROR"
        var message: String
        var propertyName: String?
        var httpStatusCode: Int
        var retriable = false

        var document: [String: Any] {
            var d: [String: Any] = ["errorCode": errorCode, "code": errorCode, "id": id, "category": category, "message": message,
                                    "httpStatusCode": httpStatusCode, "retriable": retriable]
            if let propertyName { d["propertyName"] = propertyName }
            return d
        }
    }

    /// A refused request, answered with its error list.
    struct Refusal: Error {
        var issue: Issue
        var answer: WorldlineAnswer { WorldlineAnswer(issue.httpStatusCode, WorldlineWire.errorList([issue])) }
        var response: Response { answer.response }

        init(_ status: Int, _ errorCode: String, _ id: String, _ message: String, property: String? = nil) {
            issue = Issue(errorCode: errorCode, id: id, message: message, propertyName: property, httpStatusCode: status)
        }

        /// A required field is missing (code and id as in Worldline's SDK fixtures).
        static func missing(_ property: String) -> Refusal {
            Refusal(400, "20000000", "PARAMETER_NOT_FOUND_IN_REQUEST",
                    "The parameter shown above was not found in the request", property: property)
        }

        /// A field's value is not acceptable (code as in Worldline's SDK fixtures; the id is ours).
        static func invalid(_ property: String, _ message: String) -> Refusal {
            Refusal(400, "21000020", "INVALID_VALUE", message, property: property)
        }

        /// The `Authorization` header is missing, malformed, stale or wrong (code and id unofficial).
        static let unauthorized = Refusal(401, "9002", "MISSING_OR_INVALID_AUTHORIZATION", "MISSING_OR_INVALID_AUTHORIZATION")

        /// The API key does not act for this merchant (ours).
        static let forbidden = Refusal(403, "9007", "ACCESS_TO_MERCHANT_NOT_ALLOWED", "The API key is not allowed to act for this merchant")

        /// No such payment at this merchant (ours).
        static let unknownPayment = Refusal(404, "1002", "UNKNOWN_PAYMENT_ID", "The payment does not exist", property: "paymentId")

        /// The payment's status does not allow the operation (ours).
        static func invalidStatus(_ status: String, _ operation: String) -> Refusal {
            Refusal(409, "1008", "INVALID_PAYMENT_STATUS", "A payment in status \(status) cannot be \(operation)")
        }

        /// The same idempotence key again while the first request runs
        /// (`30001002`, the code the current SDK knows for that state; `1409`
        /// was an older one; id ours).
        static let idempotenceInFlight = Refusal(409, "30001002", "DUPLICATE_REQUEST_IN_PROGRESS",
                                                 "A request with this idempotence key is still being processed")

        /// An `X-GCS-Idempotence-Key` longer than Worldline takes (40 characters).
        static func idempotenceKeyTooLong(_ length: Int) -> Refusal {
            Refusal(400, "21000020", "INVALID_VALUE", "X-GCS-Idempotence-Key has \(length) characters; at most \(WorldlineIdempotence.maximumKeyLength) are allowed",
                    property: "X-GCS-Idempotence-Key")
        }
    }

    /// `{"errorId": <uuid>, "errors": [...]}`.
    static func errorList(_ issues: [Issue]) -> [String: Any] {
        ["errorId": SimulatorJSON.uuid(), "errors": issues.map(\.document)]
    }

    /// The request body as a JSON object (at most 256 KiB); an empty body is `{}`.
    static func object(_ buffer: ByteBuffer) throws -> [String: Any] {
        guard buffer.readableBytes > 0 else { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
            throw Refusal.invalid("body", "The request body must be a JSON object")
        }
        return object
    }

    /// A JSON integer, or nil (fractions, text and absent values).
    static func integer(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber else { return nil }
        let integer = number.int64Value
        return Double(integer) == number.doubleValue ? integer : nil
    }

    static func amountOfMoney(_ amount: Int64, _ currency: String) -> [String: Any] {
        ["amount": amount, "currencyCode": currency]
    }

    /// `statusCodeChangeDateTime`: `yyyyMMddHHmmss`, UTC.
    static func changeDateTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss"
        return formatter.string(from: date)
    }

    /// Direct's `statusCategory` of a status (from Direct's status guide;
    /// a cancelled payment is counted unsuccessful).
    static func statusCategory(_ status: String) -> String {
        switch status {
        case "CREATED": "CREATED"
        case "REDIRECTED", "PENDING_PAYMENT": "PENDING_PAYMENT"
        case "PENDING_CAPTURE": "PENDING_MERCHANT"
        case "CAPTURED": "COMPLETED"
        case "REFUNDED": "REFUNDED"
        default: "UNSUCCESSFUL"
        }
    }

    static func statusOutput(_ p: WorldlinePayment) -> [String: Any] {
        ["statusCode": p.statusCode, "statusCategory": statusCategory(p.status),
         "isAuthorized": p.status == "PENDING_CAPTURE" || p.status == "CAPTURED",
         "isCancellable": p.status == "REDIRECTED" || p.status == "PENDING_CAPTURE",
         "isRefundable": p.refundable > 0, "errors": p.errors.map(\.document),
         "statusCodeChangeDateTime": changeDateTime(p.updated)]
    }

    static func references(_ p: WorldlinePayment) -> [String: Any] {
        guard let reference = p.merchantReference else { return [:] }
        return ["merchantReference": reference]
    }

    /// `cardPaymentMethodSpecificOutput`: the product and the masked card, never the number.
    static func cardOutput(_ p: WorldlinePayment) -> [String: Any] {
        var output: [String: Any] = ["paymentProductId": p.card.productId,
                                     "card": ["cardNumber": p.card.masked, "expiryDate": p.card.expiry, "bin": p.card.bin]]
        if let token = p.card.token { output["token"] = token }
        if let code = p.authorisationCode { output["authorisationCode"] = code }
        return output
    }

    /// A `PaymentResponse`.
    static func payment(_ p: WorldlinePayment) -> [String: Any] {
        ["id": p.id, "status": p.status, "statusOutput": statusOutput(p),
         "paymentOutput": ["amountOfMoney": amountOfMoney(p.amount, p.currency), "references": references(p),
                           "paymentMethod": "card", "cardPaymentMethodSpecificOutput": cardOutput(p)] as [String: Any]]
    }

    /// A `CaptureResponse`: a capture as `POST …/capture` answers it and `GET …/captures` lists it.
    static func capture(_ payment: WorldlinePayment, _ operation: WorldlinePayment.Operation) -> [String: Any] {
        ["id": operation.id, "status": "CAPTURED", "statusOutput": ["statusCode": 9],
         "captureOutput": ["amountOfMoney": amountOfMoney(operation.amount, payment.currency),
                           "references": references(payment), "paymentMethod": "card",
                           "cardPaymentMethodSpecificOutput": cardOutput(payment)] as [String: Any]]
    }

    /// A `RefundResponse`: a refund as `POST …/refund` answers it and `GET …/refunds` lists it.
    static func refund(_ payment: WorldlinePayment, _ operation: WorldlinePayment.Operation) -> [String: Any] {
        ["id": operation.id, "status": "REFUNDED",
         "statusOutput": ["statusCode": 8, "statusCategory": "REFUNDED", "isCancellable": false, "errors": [Any](),
                          "statusCodeChangeDateTime": changeDateTime(operation.created)] as [String: Any],
         "refundOutput": ["amountOfMoney": amountOfMoney(operation.amount, payment.currency),
                          "references": references(payment), "paymentMethod": "card"] as [String: Any]]
    }

    /// A `PaymentDetailsResponse`: the payment and its captures and refunds as `Operations`.
    static func details(_ p: WorldlinePayment) -> [String: Any] {
        var document = payment(p)
        document["Operations"] = p.operations.map { operation in
            let captured = operation.kind == .capture
            return ["id": operation.id, "status": captured ? "CAPTURED" : "REFUNDED",
                    "statusOutput": ["statusCode": captured ? 9 : 8, "statusCategory": captured ? "COMPLETED" : "REFUNDED",
                                     "isAuthorized": captured, "isCancellable": false, "isRefundable": captured, "errors": [Any]()] as [String: Any],
                    "amountOfMoney": amountOfMoney(operation.amount, p.currency), "paymentMethod": "card",
                    "references": references(p)] as [String: Any]
        }
        return document
    }
}
