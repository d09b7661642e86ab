import Foundation
import GatewayPayloads

/// A parsed JSON document that keeps integers exact and tells booleans from
/// numbers, for validating manifests member by member with JSON paths.
indirect enum JSONDocument: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONDocument])
    case object([String: JSONDocument])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .integer(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONDocument].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONDocument].self)) }
    }

    /// Parses `data`, or explains where it is not JSON.
    static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONDocument {
        do {
            return try JSONDecoder().decode(JSONDocument.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw JSONSyntaxError(detail: underlying ?? context.debugDescription)
        } catch {
            throw JSONSyntaxError(detail: "\(error)")
        }
    }

    /// The name of this value's JSON type, for error messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// This value serialized as compact JSON.
    var serialized: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : "null"
        case .string(let s): return Self.quote(s)
        case .array(let a): return "[" + a.map(\.serialized).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.keys.sorted().map { Self.quote($0) + ":" + o[$0]!.serialized }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String { JSONWriter.quoted(s) }
}

/// A document that is not well-formed JSON.
struct JSONSyntaxError: Error {
    var detail: String
}
