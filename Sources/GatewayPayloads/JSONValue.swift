import Foundation

/// Any JSON value: the one tree of the product, for the open-ended parts of a
/// document (an instrument's provider-specific fields, a manifest, a request
/// body before its members are checked).
///
/// Integers stay exact: a number written with no fraction and no exponent
/// that fits 64 bits is ``integer(_:)``; every other number is
/// ``number(_:)``. ``JSONParser/value()`` reads one and ``JSONWriter/value(_:)``
/// writes one (object members sorted by key, so equal trees give equal bytes).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, when this is one: a number written without a fraction
    /// or exponent, or a whole number written with one (`3.0`, `1e3`) that a
    /// double holds exactly, as JSON Schema's `integer` is any whole number.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): i
        case .number(let n) where n.rounded() == n && abs(n) < 9_007_199_254_740_992: Int64(n)
        default: nil
        }
    }

    /// The number, when this is one (an integer too).
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let n): n
        default: nil
        }
    }

    /// The boolean, when this is one.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The member `key`, when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The name of this value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: JSONPayload {
    public func write(to writer: inout JSONWriter) { writer.value(self) }

    public init(parsing parser: inout JSONParser) throws(JSONParseError) {
        self = try parser.value()
    }

    /// This value as compact JSON text (members sorted by key).
    public var serialized: String { String(decoding: jsonBytes(), as: UTF8.self) }
}

extension JSONValue {
    /// A whole document read from a file (a manifest, a data file): a UTF-8
    /// byte order mark before it is allowed, as editors write one.
    public static func parseDocument(_ data: Data) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = data.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                // A file a person edits may nest deeper than a payload (the manifest editor reads 512 too).
                var parser = JSONParser(buffer, maximumDepth: 512)
                parser.skipByteOrderMark()
                let value = try parser.value()
                try parser.finish()
                return value
            }
        }
        return try result.get()
    }
}
