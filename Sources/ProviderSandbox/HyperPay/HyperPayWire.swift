import Foundation
import Hummingbird
import NIOCore

/// OPPWA's encodings: form-encoded requests, JSON answers carrying `result`,
/// `buildNumber`, `timestamp` and `ndc`.
enum HyperPayWire {
    static let buildNumber = "sandbox-hyperpay@2026-11-01 00:00:00 +0000"

    /// The members of an `application/x-www-form-urlencoded` body or query.
    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { continue }
            fields[name] = parts.count > 1 ? decode(parts[1]) ?? "" : ""
        }
        return fields
    }

    private static func decode(_ part: Substring) -> String? {
        String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// A request's form body.
    static func body(_ request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        return form(String(buffer: buffer))
    }

    /// OPPWA's timestamp format, `2026-11-22 20:40:26+0000`.
    static func timestamp(_ date: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { let s = String(n ?? 0); return s.count < 2 ? "0" + s : s }
        return "\(c.year ?? 1970)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))+0000"
    }

    /// A random id of `count` upper-case hex digits (OPPWA's ids are 32).
    static func randomID(_ count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789ABCDEF")
        return String((0..<count).map { _ in digits[Int(generator.next() % 16)] })
    }

    /// `{"code": …, "description": …}`.
    static func result(_ code: String, description: String? = nil) -> [String: Any] {
        ["code": code, "description": description ?? HyperPayResultCode.descriptions[code] ?? code]
    }

    /// An answer document: `members` plus `result`, `buildNumber`, `timestamp`, `ndc`.
    static func document(_ code: String, description: String? = nil, ndc: String? = nil, _ members: [String: Any] = [:],
                         parameterErrors: [[String: String]] = []) -> [String: Any] {
        var result = result(code, description: description)
        if !parameterErrors.isEmpty { result["parameterErrors"] = parameterErrors }
        var document = members
        document["result"] = result
        document["buildNumber"] = buildNumber
        document["timestamp"] = timestamp()
        document["ndc"] = ndc ?? randomID().lowercased() + "_" + randomID(8).lowercased()
        return document
    }

    static func response(_ status: HTTPResponse.Status, _ document: [String: Any]) -> Response {
        SimulatorJSON.response(status, SimulatorJSON.text(document), contentType: "application/json;charset=UTF-8")
    }

    /// HTTP 400 with `200.300.404` and the offending parameters.
    /// OPPWA's published lengths of the parameters the adapter sends
    /// (`AN255 [\s\S]{8,255}` and the like, its parameter reference).
    static let lengths: [String: ClosedRange<Int>] = [
        "merchantTransactionId": 8...255, "merchantInvoiceId": 8...255, "customer.email": 6...128,
        "customer.givenName": 2...50, "customer.surname": 2...50,
    ]

    /// The parameters of `form` whose length is outside OPPWA's bounds.
    static func lengthErrors(_ form: [String: String]) -> [(name: String, value: String, message: String)] {
        lengths.keys.sorted().compactMap { name in
            guard let value = form[name], let bounds = lengths[name], !bounds.contains(value.count) else { return nil }
            return (name, value, "must be \(bounds.lowerBound) to \(bounds.upperBound) characters")
        }
    }

    static func parameterError(_ errors: [(name: String, value: String, message: String)]) -> Response {
        response(.badRequest, document(HyperPayResultCode.invalidParameter,
                                       parameterErrors: errors.map { ["name": $0.name, "value": $0.value, "message": $0.message] }))
    }
}
