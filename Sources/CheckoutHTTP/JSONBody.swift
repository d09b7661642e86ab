import CheckoutEngine
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore

/// A request body the API accepts: its members, so that a misspelt or
/// unexpected one is refused instead of silently ignored, at the top level
/// and inside the members that are objects of fixed members (`payer`), and
/// how it reads itself from the members it was given.
protocol RequestBody: Sendable {
    static var members: Set<String> { get }
    /// The members of each member that is an object of fixed members
    /// (free-form objects such as `instrument` are not listed).
    static var objectMembers: [String: Set<String>] { get }
    init(reading body: BodyMembers) throws(ProblemError)
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
        let parsed = bytes.withUnsafeReadableBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONValue(jsonBytes: buffer) }
        }
        let json: JSONValue
        switch parsed {
        case .success(let value): json = value
        case .failure(let error): throw ProblemError(code: .malformedRequest, detail: "the body is not valid JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw ProblemError(code: .malformedRequest, detail: "the body must be a JSON object")
        }
        try refuseUnknown(in: object, allowed: Body.members, at: nil)
        for (member, allowed) in Body.objectMembers.sorted(by: { $0.key < $1.key }) {
            // Not an object (null, another type): the member's own reading says what is wrong.
            guard case .object(let inner)? = object[member] else { continue }
            try refuseUnknown(in: inner, allowed: allowed, at: member)
        }
        return try Body(reading: BodyMembers(object, path: nil))
    }

    /// Refuses members of `object` not in `allowed`, naming each by its JSON
    /// path (`payer.nickname`) and listing what is allowed there; and a
    /// `null` member (no member of the API's bodies is nullable: an optional
    /// one is left out).
    private static func refuseUnknown(in object: [String: JSONValue], allowed: Set<String>, at path: String?) throws(ProblemError) {
        let unknown = object.keys.filter { !allowed.contains($0) }.sorted()
        if !unknown.isEmpty {
            let names = unknown.map { "\"\(path.map { "\($0)." } ?? "")\($0.prefix(64))\"" }.joined(separator: ", ")
            throw ProblemError(
                code: .malformedRequest,
                detail: "unknown member\(unknown.count == 1 ? "" : "s") \(names); allowed\(path.map { " in \($0)" } ?? ""): \(allowed.sorted().joined(separator: ", "))")
        }
        for key in object.keys.sorted() where object[key] == .null {
            throw ProblemError(code: .malformedRequest,
                               detail: "\(path.map { "\($0)." } ?? "")\(key) is null; leave an optional member out instead")
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
}

// MARK: The API's request bodies

/// The members of a request body's object (or of an object inside it), read
/// by type: each refusal a `400` naming the member by its path.
struct BodyMembers {
    let object: [String: JSONValue]
    let path: String?

    init(_ object: [String: JSONValue], path: String?) {
        self.object = object
        self.path = path
    }

    private func name(_ key: String) -> String { path.map { "\($0).\(key)" } ?? key }

    private func refuse(_ detail: String) -> ProblemError { ProblemError(code: .malformedRequest, detail: detail) }

    private func present(_ key: String) throws(ProblemError) -> JSONValue {
        guard let value = object[key] else { throw refuse("\(name(key)) is required") }
        return value
    }

    func string(_ key: String) throws(ProblemError) -> String {
        guard let value = try present(key).stringValue else { throw refuse("\(name(key)) must be a string") }
        return value
    }

    func optionalString(_ key: String) throws(ProblemError) -> String? {
        object[key] == nil ? nil : try string(key)
    }

    /// An amount in minor units: an integer, and a clear refusal of anything
    /// else (a decimal amount is a common mistake: 10.50 for 1050).
    func minorUnits(_ key: String) throws(ProblemError) -> Int64 {
        switch try present(key) {
        case .integer(let value): return value
        // JSON Schema's `integer` is any number with no fractional part (`2500.0`), exactly held.
        case .number(let number) where number.rounded() == number && abs(number) < 9_007_199_254_740_992:
            return Int64(number)
        case .number(let number):
            throw refuse("\(name(key)) must be an integer number of minor units (got \(number); 10.50 SAR is 1050)")
        default: throw refuse("\(name(key)) must be an integer")
        }
    }

    func optionalMinorUnits(_ key: String) throws(ProblemError) -> Int64? {
        object[key] == nil ? nil : try minorUnits(key)
    }

    /// One of `type`'s raw values.
    func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(ProblemError) -> E? where E.RawValue == String {
        guard object[key] != nil else { return nil }
        let raw = try string(key)
        guard let value = E(rawValue: raw) else {
            throw refuse("\(name(key)) must be one of \(E.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(raw.prefix(64))\")")
        }
        return value
    }

    /// A member that is an object of fixed members, read by `read`.
    func optionalObject<T>(_ key: String, _ read: (BodyMembers) throws(ProblemError) -> T) throws(ProblemError) -> T? {
        guard let value = object[key] else { return nil }
        guard case .object(let inner) = value else { throw refuse("\(name(key)) must be an object") }
        return try read(BodyMembers(inner, path: name(key)))
    }

    /// A free-form object.
    func optionalJSONObject(_ key: String) throws(ProblemError) -> [String: JSONValue]? {
        guard let value = object[key] else { return nil }
        guard case .object(let inner) = value else { throw refuse("\(name(key)) must be an object") }
        return inner
    }

    /// An object whose members are all strings.
    func stringMap(_ key: String) throws(ProblemError) -> [String: String] {
        guard case .object(let inner) = try present(key) else { throw refuse("\(name(key)) must be an object") }
        var map: [String: String] = [:]
        for (member, value) in inner {
            guard let text = value.stringValue else { throw refuse("\(name(key)).\(member) must be a string") }
            map[member] = text
        }
        return map
    }

    func optionalStringMap(_ key: String) throws(ProblemError) -> [String: String]? {
        object[key] == nil ? nil : try stringMap(key)
    }

    /// An array whose items are all strings.
    func optionalStringList(_ key: String) throws(ProblemError) -> [String]? {
        guard let value = object[key] else { return nil }
        guard case .array(let items) = value else { throw refuse("\(name(key)) must be an array of strings") }
        var list: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else { throw refuse("\(name(key))[\(index)] must be a string") }
            list.append(text)
        }
        return list
    }

    /// A whole number.
    func optionalInteger(_ key: String) throws(ProblemError) -> Int64? {
        switch object[key] {
        case nil: return nil
        case .integer(let value)?: return value
        // JSON Schema's `integer` is any number with no fractional part (`60.0`), exactly held.
        case .number(let number)? where number.rounded() == number && abs(number) < 9_007_199_254_740_992: return Int64(number)
        default: throw refuse("\(name(key)) must be an integer")
        }
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

    init(reading body: BodyMembers) throws(ProblemError) {
        amount = try body.minorUnits("amount")
        currency = try body.string("currency")
        country = try body.string("country")
        orderId = try body.string("orderId")
        payer = try body.optionalObject("payer") { payer throws(ProblemError) in
            Payer(name: try payer.optionalString("name"), email: try payer.optionalString("email"),
                  phone: try payer.optionalString("phone"), reference: try payer.optionalString("reference"))
        }
        capture = try body.optionalEnumeration("capture", CaptureMode.self)
        returnUrl = try body.optionalString("returnUrl")
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

    init(reading body: BodyMembers) throws(ProblemError) {
        method = try body.string("method")
        provider = try body.optionalString("provider")
        instrument = try body.optionalJSONObject("instrument")
        instrumentId = try body.optionalString("instrumentId")
    }

    var request: NewAttempt { NewAttempt(method: method, provider: provider, instrument: instrument, instrumentId: instrumentId) }
}

/// `POST /v1/sessions/{id}/attempts/{attemptId}/continue`.
struct ContinueBody: RequestBody {
    static let members: Set<String> = ["otp", "returnParams"]
    var otp: String?
    var returnParams: [String: String]?

    init() {}

    init(reading body: BodyMembers) throws(ProblemError) {
        otp = try body.optionalString("otp")
        returnParams = try body.optionalStringMap("returnParams")
    }

    var input: PayerInput { PayerInput(otp: otp, returnParams: returnParams) }
}

/// `POST /v1/payments/{id}/capture` and `…/refund`.
struct AmountBody: RequestBody {
    static let members: Set<String> = ["amount"]
    var amount: Int64?

    init() {}

    init(reading body: BodyMembers) throws(ProblemError) {
        amount = try body.optionalMinorUnits("amount")
    }
}

/// Routes that take no members (abort, void, verify): an empty body or `{}`.
struct EmptyBody: RequestBody {
    static let members: Set<String> = []

    init() {}

    init(reading body: BodyMembers) throws(ProblemError) {}
}
