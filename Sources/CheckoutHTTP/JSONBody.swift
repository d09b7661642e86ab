import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

/// A request body the API accepts: its members, so that a misspelt or
/// unexpected one is refused instead of silently ignored, at the top level
/// and inside the members that are objects of fixed members (`payer`).
protocol RequestBody: Decodable, Sendable {
    static var members: Set<String> { get }
    /// The members of each member that is an object of fixed members
    /// (free-form objects such as `instrument` are not listed).
    static var objectMembers: [String: Set<String>] { get }
}

extension RequestBody {
    static var objectMembers: [String: Set<String>] { [:] }
}

/// Reads a JSON request body strictly: at most ``maximumBytes``, JSON media
/// type (when a type is given), an object with only known members, each of its
/// type. Every refusal is a 4xx problem that names the member at fault.
enum JSONBody {
    /// The cap on a request body (a checkout request is a few hundred bytes).
    static let maximumBytes = 64 * 1024

    static func read<Body: RequestBody>(_ type: Body.Type, from request: Request, allowEmpty: Body? = nil) async throws -> Body {
        let bytes = try await collect(request)
        if bytes.readableBytes == 0 || bytes.readableBytesView.allSatisfy(isWhitespace) {
            if let allowEmpty { return allowEmpty }
            throw ProblemError(code: .malformedRequest, detail: "the request needs a JSON object body")
        }
        if let contentType = request.headers[.contentType], !isJSON(contentType) {
            throw ProblemError(code: .unsupportedMediaType, detail: "the body must be application/json (got \(contentType.prefix(100)))")
        }
        do {
            return try JSONDecoder().decode(Strict<Body>.self, from: Data(buffer: bytes)).value
        } catch let error as DecodingError {
            // Foundation may wrap an error a body's own decoding threw.
            if case .dataCorrupted(let context) = error, let own = context.underlyingError as? ProblemError { throw own }
            throw ProblemError(code: .malformedRequest, detail: describe(error))
        }
    }

    /// The body, or a 413 past the cap.
    static func collect(_ request: Request) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBytes {
            throw ProblemError(code: .payloadTooLarge, detail: "the request body has \(length) bytes; the limit is \(maximumBytes)")
        }
        do {
            return try await request.body.collect(upTo: maximumBytes)
        } catch is NIOTooManyBytesError {
            throw ProblemError(code: .payloadTooLarge, detail: "the request body is larger than \(maximumBytes) bytes")
        }
    }

    /// Whether a Content-Type names JSON: `application/json` or
    /// `application/<anything>+json`, any case, parameters ignored. Read as
    /// ASCII bytes: this runs on every POST, and Foundation's trimming and
    /// case mapping cost more than the rest of the check by far.
    static func isJSON(_ contentType: String) -> Bool {
        let media = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.drop(while: isWhitespace)
        let lowered = media.reversed().drop(while: isWhitespace).reversed().map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        let type = String(decoding: lowered, as: UTF8.self)
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// What a decoding error means, with the JSON path of the member at fault.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the body" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(typeName(type))"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is required"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "the body is not valid JSON: \(underlying ?? context.debugDescription)"
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "the body does not match the request's schema"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int64.Type, is Int.Type: "an integer"
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default: type == [String: JSONValue].self || type == [String: String].self ? "an object" : "\(type)"
        }
    }
}

/// Decodes `Value` after checking that the object has no other members.
private struct Strict<Value: RequestBody>: Decodable {
    var value: Value

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let object: KeyedDecodingContainer<AnyKey>
        do {
            object = try decoder.container(keyedBy: AnyKey.self)
        } catch DecodingError.typeMismatch {
            throw ProblemError(code: .malformedRequest, detail: "the body must be a JSON object")
        }
        try Self.refuseUnknown(in: object, allowed: Value.members, at: nil)
        for (member, allowed) in Value.objectMembers.sorted(by: { $0.key < $1.key }) {
            let key = AnyKey(stringValue: member)
            // Not an object (null, another type): the member's own decoding says what is wrong.
            guard object.contains(key), let inner = try? object.nestedContainer(keyedBy: AnyKey.self, forKey: key) else { continue }
            try Self.refuseUnknown(in: inner, allowed: allowed, at: member)
        }
        value = try Value(from: decoder)
    }

    /// Refuses members of `object` not in `allowed`, naming each by its JSON
    /// path (`payer.nickname`) and listing what is allowed there; and a
    /// `null` member (no member of the API's bodies is nullable: an optional
    /// one is left out).
    private static func refuseUnknown(in object: KeyedDecodingContainer<AnyKey>, allowed: Set<String>, at path: String?) throws {
        let unknown = object.allKeys.map(\.stringValue).filter { !allowed.contains($0) }.sorted()
        if !unknown.isEmpty {
            let names = unknown.map { "\"\(path.map { "\($0)." } ?? "")\($0.prefix(64))\"" }.joined(separator: ", ")
            throw ProblemError(
                code: .malformedRequest,
                detail: "unknown member\(unknown.count == 1 ? "" : "s") \(names); allowed\(path.map { " in \($0)" } ?? ""): \(allowed.sorted().joined(separator: ", "))")
        }
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where try object.decodeNil(forKey: key) {
            throw ProblemError(code: .malformedRequest,
                               detail: "\(path.map { "\($0)." } ?? "")\(key.stringValue) is null; leave an optional member out instead")
        }
    }
}

// MARK: The API's request bodies

extension KeyedDecodingContainer {
    /// An amount in minor units: an integer, and a clear refusal of anything
    /// else (a decimal amount is a common mistake: 10.50 for 1050).
    func decodeMinorUnits(forKey key: Key) throws -> Int64 {
        do {
            return try decode(Int64.self, forKey: key)
        } catch {
            // (Foundation throws its own error for 25.5 as an Int64, which ends as "not valid JSON".)
            if case DecodingError.keyNotFound = error { throw error }
            if let number = try? decode(Double.self, forKey: key) {
                throw ProblemError(code: .malformedRequest,
                                   detail: "\(key.stringValue) must be an integer number of minor units (got \(number); 10.50 SAR is 1050)")
            }
            throw DecodingError.typeMismatch(Int64.self, .init(codingPath: codingPath + [key], debugDescription: "not an integer"))
        }
    }

    func decodeMinorUnitsIfPresent(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeMinorUnits(forKey: key)
    }
}

/// `POST /v1/sessions`.
struct CreateSessionBody: RequestBody {
    static let members: Set<String> = ["amount", "currency", "country", "orderId", "payer", "capture", "returnUrl"]
    static let objectMembers: [String: Set<String>] = ["payer": ["name", "email", "phone", "reference"]]
    var amount: Int64
    var currency: String
    var country: String
    var orderId: String
    var payer: Payer?
    var capture: CaptureMode?
    var returnUrl: String?

    enum CodingKeys: String, CodingKey { case amount, currency, country, orderId, payer, capture, returnUrl }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        amount = try c.decodeMinorUnits(forKey: .amount)
        currency = try c.decode(String.self, forKey: .currency)
        country = try c.decode(String.self, forKey: .country)
        orderId = try c.decode(String.self, forKey: .orderId)
        payer = try c.decodeIfPresent(Payer.self, forKey: .payer)
        capture = try c.decodeIfPresent(CaptureMode.self, forKey: .capture)
        returnUrl = try c.decodeIfPresent(String.self, forKey: .returnUrl)
    }

    var request: NewSession {
        NewSession(amount: Money(value: amount, currency: currency), country: country, orderId: orderId, payer: payer,
                   capture: capture, returnUrl: returnUrl)
    }
}

/// `POST /v1/sessions/{id}/attempts`.
struct AttemptBody: RequestBody {
    static let members: Set<String> = ["method", "provider", "instrument", "instrumentId"]
    var method: String
    var provider: String?
    var instrument: [String: JSONValue]?
    var instrumentId: String?

    var request: NewAttempt { NewAttempt(method: method, provider: provider, instrument: instrument, instrumentId: instrumentId) }
}

/// `POST /v1/sessions/{id}/attempts/{attemptId}/continue`.
struct ContinueBody: RequestBody {
    static let members: Set<String> = ["otp", "returnParams"]
    var otp: String?
    var returnParams: [String: String]?

    var input: PayerInput { PayerInput(otp: otp, returnParams: returnParams) }
}

/// `POST /v1/payments/{id}/capture` and `…/refund`.
struct AmountBody: RequestBody {
    static let members: Set<String> = ["amount"]
    var amount: Int64?

    enum CodingKeys: String, CodingKey { case amount }

    init() {}

    init(from decoder: any Decoder) throws {
        amount = try decoder.container(keyedBy: CodingKeys.self).decodeMinorUnitsIfPresent(forKey: .amount)
    }
}

/// Routes that take no members (abort, void, verify): an empty body or `{}`.
struct EmptyBody: RequestBody {
    static let members: Set<String> = []
}
