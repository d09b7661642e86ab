/// A pull parser over JSON bytes: the hot-path decoder for payload documents.
/// Types read their members as they come, with no intermediate tree.
public struct JSONParser: ~Copyable {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var offset = 0
    /// Objects and arrays ``value()`` is inside of now.
    private var depth = 0
    /// The deepest nesting this parser reads (``maximumDepth`` unless told).
    private let limit: Int

    /// The deepest nesting ``value()`` (and ``skipValue()``) reads: a
    /// document is untrusted (an adapter's result, a request body), and each
    /// level is a frame of the reader's stack. No payload of the product
    /// nests beyond a dozen.
    public static let maximumDepth = 64

    /// Parses `buffer`, which must outlive the parser, reading nesting up to
    /// `maximumDepth` levels (a file a person edits may nest deeper than a payload).
    public init(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = JSONParser.maximumDepth) {
        // An empty buffer still needs a valid address; nothing is read past `end`.
        base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        end = buffer.count
        limit = maximumDepth
    }

    /// `message` at the current byte (or at `position`), with its line and
    /// column (from 1; lines end at LF, columns count Unicode scalars).
    public func error(_ message: String, at position: Int? = nil) -> JSONParseError {
        let at = min(position ?? offset, end)
        var line = 1, column = 1
        for index in 0..<at {
            let byte = base[index]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONParseError(message: message, offset: at, line: line, column: column)
    }

    /// What the next byte is, for a message: `'x'`, `U+00A0`, or `end of input`.
    public mutating func describeNext() -> String {
        guard let byte = peek() else { return "end of input" }
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let scalar = String(decoding: UnsafeBufferPointer(start: base + offset, count: min(4, end - offset)), as: UTF8.self).unicodeScalars.first!
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Whether nothing but whitespace is left.
    public mutating func atEnd() -> Bool { peek() == nil }

    /// The next byte after whitespace (nothing consumed), nil at the end.
    public mutating func nextByte() -> UInt8? { peek() }

    /// Skips a UTF-8 byte order mark at the start, as editors write one.
    public mutating func skipByteOrderMark() {
        if offset == 0, end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { offset = 3 }
    }

    /// Skips whitespace; the offset of the next byte.
    public mutating func skipWhitespaceAndTell() -> Int {
        skipWhitespace()
        return offset
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while offset < end {
            switch base[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    @inline(__always)
    private mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < end ? base[offset] : nil
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
        guard peek() == byte else { throw error("expected \(what), found \(describeNext())") }
        offset += 1
    }

    /// Whether the next value is `null` (consumed if so).
    public mutating func takeNull() -> Bool {
        guard peek() == UInt8(ascii: "n"), offset + 4 <= end,
              base[offset + 1] == UInt8(ascii: "u"), base[offset + 2] == UInt8(ascii: "l"), base[offset + 3] == UInt8(ascii: "l")
        else { return false }
        offset += 4
        return true
    }

    /// Reads an object, calling `body` with each member's key; `body` must
    /// consume the member's value (or call ``skipValue()``).
    public mutating func object(_ body: (String, inout JSONParser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try objectMembers { key, _, _, parser throws(JSONParseError) in try body(key, &parser) }
    }

    /// Reads an object like ``object(_:)``, also telling where each member's
    /// key begins (its opening quote) and ends (past its closing quote): what
    /// an editor that keeps every other byte needs.
    public mutating func objectMembers(_ body: (String, _ keyStart: Int, _ keyEnd: Int, inout JSONParser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try expect(UInt8(ascii: "{"), "an object")
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes, found \(describeNext())") }
            let keyStart = offset
            let key = try string()
            let keyEnd = offset
            try expect(UInt8(ascii: ":"), "':' after a member name")
            try body(key, keyStart, keyEnd, &self)
            switch peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return
            default: throw error("expected ',' or '}' in an object, found \(describeNext())")
            }
        }
    }

    /// Reads an array, calling `body` once per element; `body` consumes it.
    public mutating func array(_ body: (inout JSONParser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try expect(UInt8(ascii: "["), "an array")
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try body(&self)
            switch peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return
            default: throw error("expected ',' or ']' in an array, found \(describeNext())")
            }
        }
    }

    public mutating func string() throws(JSONParseError) -> String {
        try expect(UInt8(ascii: "\""), "a string")
        let start = offset
        let quote = offset - 1
        // Fast path: no escapes.
        var ascii = true
        while offset < end {
            let byte = base[offset]
            if byte == UInt8(ascii: "\"") {
                // Strictly UTF-8 (RFC 8259): bytes that are not are refused, never repaired.
                let bytes = UnsafeBufferPointer(start: base + start, count: offset - start)
                guard ascii || Self.isWellFormedUTF8(bytes) else { throw error("invalid UTF-8 in a string") }
                offset += 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw controlCharacter(byte) }
            if byte >= 0x80 { ascii = false }
            offset += 1
        }
        var scalars = Array(UnsafeBufferPointer(start: base + start, count: offset - start))
        while offset < end {
            let byte = base[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard scalars.withUnsafeBufferPointer(Self.isWellFormedUTF8) else { throw error("invalid UTF-8 in a string") }
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                let backslash = offset - 1
                guard offset < end else { throw error("unterminated string that starts", at: quote) }
                let escape = base[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4(escapeAt: backslash)
                    if (0xD800..<0xDC00).contains(code) {
                        guard offset + 2 <= end, base[offset] == UInt8(ascii: "\\"), base[offset + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in a \\u escape", at: backslash)
                        }
                        offset += 2
                        let low = try hex4(escapeAt: offset - 2)
                        guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired UTF-16 surrogate in a \\u escape", at: backslash) }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(code) {
                        throw error("unpaired UTF-16 surrogate in a \\u escape", at: backslash)
                    }
                    scalars.append(contentsOf: String(Character(Unicode.Scalar(code)!)).utf8)
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))' in a string", at: backslash)
                }
            case 0..<0x20:
                offset -= 1
                throw controlCharacter(byte)
            default:
                scalars.append(byte)
            }
        }
        throw error("unterminated string that starts", at: quote)
    }

    /// Whether `bytes` are well-formed UTF-8 (RFC 3629, the Unicode
    /// standard's table 3-7): no overlong form, no surrogate, nothing above
    /// U+10FFFF, no sequence cut short.
    ///
    /// Written here rather than `String(validating:as:)`, which is not
    /// specialized across modules: it instantiated generic metadata at run
    /// time for every string parsed (11% of the bridge benchmark's samples,
    /// host and adapter alike). A string of ASCII alone (most) skips this.
    static func isWellFormedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // How many continuation bytes follow, and the range the first of them must be in.
            let following: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: following = 1
            case 0xE0: following = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: following = 2
            case 0xED: following = 2; high = 0x9F
            case 0xF0: following = 3; low = 0x90
            case 0xF1...0xF3: following = 3
            case 0xF4: following = 3; high = 0x8F
            default: return false
            }
            guard index + following < count else { return false }
            let first = bytes[index + 1]
            guard first >= low, first <= high else { return false }
            var next = index + 2
            while next <= index + following {
                guard bytes[next] & 0xC0 == 0x80 else { return false }
                next += 1
            }
            index += following + 1
        }
        return true
    }

    private func controlCharacter(_ byte: UInt8) -> JSONParseError {
        error("unescaped control character U+00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true)) in a string")
    }

    /// The four hex digits after `\\u` (the backslash at `escape`).
    private mutating func hex4(escapeAt escape: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard offset < end else { throw error("incomplete \\u escape in a string", at: escape) }
            let c = base[offset]
            offset += 1
            let digit: UInt32
            switch c {
            case 48...57: digit = UInt32(c - 48)
            case 97...102: digit = UInt32(c - 87)
            case 65...70: digit = UInt32(c - 55)
            default: throw error("\\u escape needs four hex digits", at: escape)
            }
            value = value << 4 | digit
        }
        return value
    }

    /// An integer (no fraction, no exponent), within Int64.
    public mutating func integer() throws(JSONParseError) -> Int64 {
        skipWhitespace()
        var negative = false
        if offset < end, base[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
        }
        let start = offset
        var magnitude: UInt64 = 0
        while offset < end, base[offset] >= 48, base[offset] <= 57 {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(base[offset] - 48))
            guard !o1, !o2 else { throw error("integer out of range") }
            magnitude = sum
            offset += 1
        }
        guard offset > start else { throw error("expected an integer, found \(describeNext())") }
        guard base[start] != 48 || offset == start + 1 else { throw error("invalid number: leading zero", at: start) }
        if offset < end, base[offset] == UInt8(ascii: ".") || base[offset] == UInt8(ascii: "e") || base[offset] == UInt8(ascii: "E") {
            throw error("expected an integer, found a fraction")
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw error("integer out of range") }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw error("integer out of range") }
        return Int64(magnitude)
    }

    public mutating func bool() throws(JSONParseError) -> Bool {
        switch peek() {
        case UInt8(ascii: "t") where offset + 4 <= end && base[offset + 1] == UInt8(ascii: "r") && base[offset + 2] == UInt8(ascii: "u") && base[offset + 3] == UInt8(ascii: "e"):
            offset += 4
            return true
        case UInt8(ascii: "f") where offset + 5 <= end && base[offset + 1] == UInt8(ascii: "a") && base[offset + 2] == UInt8(ascii: "l") && base[offset + 3] == UInt8(ascii: "s") && base[offset + 4] == UInt8(ascii: "e"):
            offset += 5
            return false
        default:
            throw error("expected true or false, found \(describeNext())")
        }
    }

    /// A number (RFC 8259's grammar, strictly: no leading zeros, no `+`, no
    /// bare `.`), read exactly as Swift reads its shortest decimal form.
    public mutating func double() throws(JSONParseError) -> Double {
        switch try number() {
        case .integer(let i): return Double(i)
        case .number(let n): return n
        default: throw error("expected a number, found \(describeNext())")
        }
    }

    /// A number as the tree keeps it: ``JSONValue/integer(_:)`` when written
    /// with no fraction and no exponent and within Int64, else
    /// ``JSONValue/number(_:)``.
    public mutating func number() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let start = offset
        if offset < end, base[offset] == UInt8(ascii: "-") {
            offset += 1
            guard offset < end, base[offset] >= 48, base[offset] <= 57 else { throw error("invalid number: expected a digit, found \(describeRaw())") }
        }
        guard offset < end, base[offset] >= 48, base[offset] <= 57 else { throw error("expected a number, found \(describeNext())") }
        if base[offset] == 48 {
            offset += 1
            if offset < end, base[offset] >= 48, base[offset] <= 57 { throw error("invalid number: leading zero", at: start) }
        } else {
            while offset < end, base[offset] >= 48, base[offset] <= 57 { offset += 1 }
        }
        var integral = true
        if offset < end, base[offset] == UInt8(ascii: ".") {
            integral = false
            offset += 1
            let digits = offset
            while offset < end, base[offset] >= 48, base[offset] <= 57 { offset += 1 }
            guard offset > digits else { throw error("invalid number: expected a digit after '.', found \(describeRaw())") }
        }
        if offset < end, base[offset] == UInt8(ascii: "e") || base[offset] == UInt8(ascii: "E") {
            integral = false
            offset += 1
            if offset < end, base[offset] == UInt8(ascii: "+") || base[offset] == UInt8(ascii: "-") { offset += 1 }
            let digits = offset
            while offset < end, base[offset] >= 48, base[offset] <= 57 { offset += 1 }
            guard offset > digits else { throw error("invalid number: expected a digit in the exponent, found \(describeRaw())") }
        }
        let text = UnsafeBufferPointer(start: base + start, count: offset - start)
        if integral, let exact = Self.exactInteger(text) { return .integer(exact) }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { throw error("number out of range") }
        return .number(value)
    }

    /// The byte at the offset as ``describeNext()`` says it, whitespace included.
    private func describeRaw() -> String {
        guard offset < end else { return "end of input" }
        let byte = base[offset]
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "U+00" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }

    /// `text` (an optional `-` and digits) as an Int64, or nil past its range.
    private static func exactInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var negative = false
        var index = 0
        if text.first == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        var magnitude: UInt64 = 0
        while index < text.count {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(text[index] - 48))
            guard !o1, !o2 else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Whether the next value is a string (nothing consumed).
    public mutating func nextIsString() -> Bool { peek() == UInt8(ascii: "\"") }

    /// Whether the next value is a number (nothing consumed).
    public mutating func nextIsNumber() -> Bool {
        guard let byte = peek() else { return false }
        return byte == UInt8(ascii: "-") || (byte >= 48 && byte <= 57)
    }

    /// The byte offset of the next byte to read.
    public var position: Int { offset }

    /// Any value, as a tree; refused when nested deeper than ``maximumDepth``.
    public mutating func value() throws(JSONParseError) -> JSONValue {
        switch peek() {
        case UInt8(ascii: "{"):
            try enter()
            defer { depth -= 1 }
            var members: [String: JSONValue] = [:]
            try object { key, parser throws(JSONParseError) in members[key] = try parser.value() }
            return .object(members)
        case UInt8(ascii: "["):
            try enter()
            defer { depth -= 1 }
            var elements: [JSONValue] = []
            try array { parser throws(JSONParseError) in elements.append(try parser.value()) }
            return .array(elements)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case let byte? where byte == UInt8(ascii: "-") || (byte >= 48 && byte <= 57): return try number()
        default: throw error("expected a value, found \(describeNext())")
        }
    }

    private mutating func enter() throws(JSONParseError) {
        guard depth < limit else { throw error("arrays and objects nested deeper than \(limit) levels") }
        depth += 1
    }

    /// `word` (`true`, `false`, `null`) at the offset, consumed.
    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let start = offset
        var index = 0
        let matched = word.withUTF8Buffer { letters -> Bool in
            for letter in letters {
                guard offset + index < end, base[offset + index] == letter else { return false }
                index += 1
            }
            return true
        }
        guard matched else { throw error("invalid literal: expected '\(word)'", at: start) }
        offset += index
    }

    /// Consumes a value without keeping it (an unknown member), checking it
    /// as strictly as ``value()`` does.
    public mutating func skipValue() throws(JSONParseError) {
        switch peek() {
        case UInt8(ascii: "{"):
            try enter()
            defer { depth -= 1 }
            try object { _, parser throws(JSONParseError) in try parser.skipValue() }
        case UInt8(ascii: "["):
            try enter()
            defer { depth -= 1 }
            try array { parser throws(JSONParseError) in try parser.skipValue() }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case let byte? where byte == UInt8(ascii: "-") || (byte >= 48 && byte <= 57): _ = try number()
        default: throw error("expected a value, found \(describeNext())")
        }
    }

    /// Consumes a string, building it only when it has escapes.
    private mutating func skipString() throws(JSONParseError) {
        let start = offset
        offset += 1
        var ascii = true
        while offset < end {
            let byte = base[offset]
            if byte == UInt8(ascii: "\"") {
                guard ascii || Self.isWellFormedUTF8(UnsafeBufferPointer(start: base + start + 1, count: offset - start - 1)) else {
                    throw error("invalid UTF-8 in a string")
                }
                offset += 1
                return
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            offset += 1
        }
        offset = start
        _ = try string()
    }

    /// Checks nothing but whitespace follows the document.
    public mutating func finish() throws(JSONParseError) {
        guard peek() == nil else { throw error("unexpected \(describeNext()) after the document") }
    }

    // MARK: Typed helpers for optional members

    public mutating func optionalString() throws(JSONParseError) -> String? { takeNull() ? nil : try string() }

    public mutating func stringMap() throws(JSONParseError) -> [String: String]? {
        if takeNull() { return nil }
        var map: [String: String] = [:]
        try object { key, parser throws(JSONParseError) in map[key] = try parser.string() }
        return map
    }

    public mutating func nested<P: JSONPayload>(_ type: P.Type) throws(JSONParseError) -> P? {
        takeNull() ? nil : try P(parsing: &self)
    }
}

/// A document that does not parse, or lacks what its type requires.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// Byte offset in the document.
    public var offset: Int
    /// Where, for people: line and column from 1 (columns count Unicode scalars).
    public var line: Int
    public var column: Int

    public init(message: String, offset: Int, line: Int = 1, column: Int = 1) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    public var description: String { "\(message) at \(line):\(column)" }
}
