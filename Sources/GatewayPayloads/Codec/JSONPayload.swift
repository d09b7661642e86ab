import Foundation

/// A document with its JSON coding in one place (``JSONWriter`` and
/// ``JSONParser``, the one writer and parser): every payload the host and the
/// SDK exchange, every document the engine stores and the API shows. Readers
/// ignore members they do not know (forward compatibility within a major
/// version).
public protocol JSONPayload: Sendable {
    func write(to writer: inout JSONWriter)
    init(parsing parser: inout JSONParser) throws(JSONParseError)
}

extension JSONPayload {
    /// This document as compact JSON bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Parses a whole document.
    public init(jsonBytes buffer: UnsafeRawBufferPointer) throws(JSONParseError) {
        var parser = JSONParser(buffer)
        self = try Self(parsing: &parser)
        try parser.finish()
    }

    /// Parses a whole document.
    public init(jsonData data: Data) throws(JSONParseError) {
        let result: Result<Self, JSONParseError> = data.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> Self in try Self(jsonBytes: buffer) }
        }
        self = try result.get()
    }
}

/// Collects a document's required members and names the first one missing.
@inline(__always)
public func required<T>(_ value: T?, _ name: StaticString, _ parser: borrowing JSONParser) throws(JSONParseError) -> T {
    guard let value else { throw parser.error("missing required member \"\(name)\"") }
    return value
}
