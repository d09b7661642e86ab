import Foundation
import Hummingbird
import NIOCore

/// Swedbank Pay's documents as the simulator writes them: payment orders
/// with their `operations[]`, payment sessions, and RFC 7807 problems
/// (`type` under `https://api.payex.com/psp/errordetail/…` or
/// `…/paymentorders/…`, with `problems[{name, description}]`).
enum SwedbankPayWire {
    static let contentType = "application/json;version=3.1"
    static let problemBase = "https://api.payex.com/psp/errordetail/"
    static let orderProblemBase = "https://api.payex.com/psp/errordetail/paymentorders/"

    /// A refusal answered as a problem document.
    struct Refusal: Error {
        var status: Int
        var type: String
        var title: String
        var detail: String
        var problems: [(name: String, description: String)] = []

        static func input(_ name: String, _ description: String) -> Refusal {
            Refusal(status: 400, type: problemBase + "inputerror", title: "Error in input data",
                    detail: "Input validation failed, error description in problems node!", problems: [(name, description)])
        }

        static func notFound(_ detail: String) -> Refusal {
            Refusal(status: 404, type: problemBase + "notfound", title: "Not Found", detail: detail)
        }

        static func notAllowed(_ detail: String) -> Refusal {
            Refusal(status: 409, type: problemBase + "paymentsessions/operationnotallowed", title: "Operation not allowed", detail: detail)
        }

        var response: Response {
            var document: [String: Any] = ["type": type, "title": title, "status": status, "detail": detail,
                                           "instance": "https://api.payex.com/psp/" + SimulatorJSON.uuid()]
            if !problems.isEmpty { document["problems"] = problems.map { ["name": $0.name, "description": $0.description] } }
            return SimulatorJSON.response(HTTPResponse.Status(code: status), SimulatorJSON.text(document), contentType: "application/problem+json")
        }
    }

    /// The bearer token check: a problem document when it is missing or wrong.
    static func unauthorized(_ request: Request) -> Response? {
        guard request.headers[.authorization] == "Bearer " + SwedbankPaySimulator.accessToken else {
            return Refusal(status: 401, type: problemBase + "unauthorized", title: "Unauthorized",
                           detail: "The access token is missing or not valid for this merchant").response
        }
        return nil
    }

    /// The request body as a JSON object (at most 256 KiB).
    static func body(_ request: Request) async throws -> [String: Any] {
        let buffer = try await request.body.collect(upTo: 256 * 1024)
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
            throw Refusal.input("body", "The request body must be a JSON object")
        }
        return object
    }

    static func answer(_ status: HTTPResponse.Status = .ok, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, SimulatorJSON.text(document), contentType: contentType)
    }

    static func operation(_ rel: String, _ href: String, method: String = "GET", contentType: String = "application/json") -> [String: Any] {
        ["rel": rel, "href": href, "method": method, "contentType": contentType]
    }

    /// `{"paymentOrder": …, "operations": […]}`; `expand` names the
    /// sub-resources written inline (`paid`, `financialtransactions`,
    /// `failedattempts`, `metadata`).
    static func order(_ order: SwedbankPayOrder, api: String, pages: String, expand: Set<String>) -> [String: Any] {
        let path = order.path
        var paid: [String: Any] = ["id": path + "/paid"]
        if expand.contains("paid"), order.status == "Paid" || order.status == "Reversed" || order.cancelled {
            paid["instrument"] = order.instrument ?? NSNull()
            paid["transactionType"] = order.transactionType ?? NSNull()
            paid["number"] = order.number ?? NSNull()
            paid["payeeReference"] = order.payeeReference
            paid["amount"] = order.amount
            paid["paymentTokenGenerated"] = order.generatePaymentToken && order.card != nil
            if let card = order.card {
                paid["details"] = ["cardBrand": card.brand, "maskedPan": card.maskedPan, "expiryDate": card.expiry]
            }
        }
        var transactions: [String: Any] = ["id": path + "/financialtransactions"]
        if expand.contains("financialtransactions") {
            transactions["financialTransactionsList"] = order.transactions.map { t in
                ["created": SimulatorJSON.timestamp(t.created), "type": t.type, "number": t.number, "amount": t.amount, "vatAmount": 0,
                 "payeeReference": t.payeeReference] as [String: Any]
            }
        }
        var failed: [String: Any] = ["id": path + "/failedattempts"]
        if expand.contains("failedattempts") {
            failed["failedAttemptList"] = order.failedAttempts.map { a in
                ["created": SimulatorJSON.timestamp(a.created), "instrument": a.instrument, "status": "Failed",
                 "problem": ["type": a.problemType, "title": "Payment attempt failed"]] as [String: Any]
            }
        }
        var metadata: [String: Any] = ["id": path + "/metadata"]
        if expand.contains("metadata") { metadata.merge(order.metadata) { $1 } }
        let document: [String: Any] = [
            "id": path, "created": SimulatorJSON.timestamp(order.createdAt), "updated": SimulatorJSON.timestamp(Date()),
            "operation": "Purchase", "status": order.status, "currency": order.currency, "amount": order.amount,
            "vatAmount": order.vatAmount, "description": order.description, "language": order.language,
            "remainingCaptureAmount": order.remainingCapture, "remainingCancellationAmount": order.remainingCancellation,
            "remainingReversalAmount": order.remainingReversal,
            "availableInstruments": SwedbankPaySimulator.instruments,
            "paid": paid, "financialTransactions": transactions, "failedAttempts": failed, "metadata": metadata,
            "payeeInfo": ["id": path + "/payeeinfo"], "urls": ["id": path + "/urls"],
        ]
        return ["paymentOrder": document, "operations": operations(of: order, api: api, pages: pages)]
    }

    /// The operations a payment order offers in its state.
    static func operations(of order: SwedbankPayOrder, api: String, pages: String) -> [[String: Any]] {
        let href = api + order.path
        switch order.status {
        case "Initialized":
            return [
                operation("view-paymentsession", api + "/psp/paymentsessions/" + order.token),
                operation("redirect-checkout", pages + "/ecom/checkout/" + order.token, contentType: "text/html"),
                operation("abort", href, method: "PATCH"),
            ]
        case "Paid":
            var ops: [[String: Any]] = []
            if order.remainingCapture > 0 { ops.append(operation("capture", href + "/captures", method: "POST")) }
            if order.remainingCancellation > 0 { ops.append(operation("cancel", href + "/cancellations", method: "POST")) }
            if order.remainingReversal > 0 { ops.append(operation("reversal", href + "/reversals", method: "POST")) }
            return ops
        default:
            return []
        }
    }
}
