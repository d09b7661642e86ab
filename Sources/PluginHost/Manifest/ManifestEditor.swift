import GatewayPayloads
/// Why ``ManifestEditor`` could not edit a document.
public enum ManifestEditError: Error, Equatable, CustomStringConvertible {
    /// The document's top level is not a JSON object (an array, a string, ...).
    case notAnObject
    /// The document (or the new value) is not well-formed JSON: what is wrong, and where (line:column).
    case malformed(String)

    public var description: String {
        switch self {
        case .notAnObject: "the document's top level is not a JSON object"
        case .malformed(let detail): "malformed JSON: \(detail)"
        }
    }
}

/// Edits one top-level member of a JSON object document as text, so that every
/// other byte of the file (whitespace, key order, formatting, other members)
/// stays as it was. Used by `gateway providers enable|disable ID` and
/// `gateway providers pin ID` to change a manifest without reformatting it.
///
/// The whole document is checked to be well-formed JSON (RFC 8259) before
/// anything is changed, and the new value must be a single JSON value, so the
/// result is always well-formed JSON too.
public enum ManifestEditor {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 512

    /// Returns `text` with the top-level member `key` set to `jsonValue` (a JSON literal
    /// already serialized, e.g. "true", "\"abc\""). If the member exists at the top level,
    /// only its value's characters are replaced. If it does not, a new member is inserted
    /// as the LAST member of the top-level object, on its own line, using the indentation
    /// of the existing last member (or two spaces if the object is empty or on one line
    /// then inline with ", "), preserving a trailing newline.
    ///
    /// - Only members of the top-level object are considered: a member of the same name
    ///   inside a nested object, or text inside a string value, is never touched.
    /// - Keys are compared after decoding their escapes (`"en\u0061bled"` is `enabled`),
    ///   unicode scalar by scalar.
    /// - If the key occurs more than once at the top level, the LAST occurrence is
    ///   replaced (the one JSON parsers keep); earlier ones are left as they are.
    /// - Whitespace around `jsonValue` is dropped; the value itself is inserted verbatim.
    /// - An inserted member uses the file's line ending (CRLF if the first line break
    ///   of the file is CRLF), and copies the `":"` spacing of the last member.
    /// - Empty object: `{}` becomes `{` NL two-spaces member NL `}` (indented relative to
    ///   the line of the `{`). Object on one line: `, "key": value` is appended after its
    ///   last member.
    ///
    /// - Throws: ``ManifestEditError/notAnObject`` if the top level is another JSON value,
    ///   ``ManifestEditError/malformed(_:)`` if `text` or `jsonValue` is not well-formed JSON.
    public static func settingTopLevelMember(
        _ key: String, to jsonValue: String, in text: String
    ) throws(ManifestEditError) -> String {
        let value = try checkedValue(jsonValue)
        let bytes = Array(text.utf8)
        let object = try TopLevelObject.scan(bytes)

        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + value.count + key.utf8.count + 16)

        let wanted = Array(key.unicodeScalars)
        if let member = object.members.last(where: { $0.key == wanted }) {
            out += bytes[..<member.valueStart]
            out += value
            out += bytes[member.valueEnd...]
            return String(decoding: out, as: UTF8.self)
        }

        let newline = lineEnding(of: bytes)
        let quotedKey = Array(quote(key).utf8)
        guard let last = object.members.last else {
            // Empty object: the member goes on its own line, two spaces in from the `{` line.
            let base = indentation(ofLineAt: object.open, in: bytes)
            out += bytes[...object.open]
            out += newline + base + Array("  ".utf8) + quotedKey + Array(": ".utf8) + value
            out += newline + base
            out += bytes[object.close...]
            return String(decoding: out, as: UTF8.self)
        }

        // Copy the last member's spacing around ':' unless it spans lines.
        var separator = Array(bytes[last.keyEnd..<last.valueStart])
        if separator.contains(where: isLineBreak) { separator = Array(": ".utf8) }

        out += bytes[..<last.valueEnd]
        let onOneLine = !bytes[object.open...object.close].contains(where: isLineBreak)
        if onOneLine {
            out += Array(", ".utf8) + quotedKey + separator + value
        } else {
            let indent = lineStart(of: last.keyStart, in: bytes) <= object.open
                ? indentation(ofLineAt: object.open, in: bytes) + Array("  ".utf8)
                : indentation(ofLineAt: last.keyStart, in: bytes)
            out += Array(",".utf8) + newline + indent + quotedKey + separator + value
        }
        out += bytes[last.valueEnd...]
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Helpers

    /// `jsonValue` without surrounding whitespace, checked to be exactly one JSON value.
    private static func checkedValue(_ jsonValue: String) throws(ManifestEditError) -> [UInt8] {
        let bytes = Array(jsonValue.utf8)
        var scanner = JSONScanner(bytes)
        do throws(ManifestEditError) {
            scanner.skipWhitespace()
            let start = scanner.position
            guard !scanner.atEnd else { throw scanner.failure("expected a JSON value, found end of input") }
            try scanner.scanValue(depth: 0)
            let end = scanner.position
            scanner.skipWhitespace()
            guard scanner.atEnd else { throw scanner.failure("unexpected \(scanner.describeCurrent()) after the value") }
            return Array(bytes[start..<end])
        } catch {
            guard case .malformed(let detail) = error else { throw error }
            throw .malformed("the new value is not a single JSON value: \(detail)")
        }
    }

    /// The file's line ending: that of its first line break, "\n" if it has none.
    private static func lineEnding(of bytes: [UInt8]) -> [UInt8] {
        guard let index = bytes.firstIndex(where: isLineBreak) else { return [0x0A] }
        if bytes[index] == 0x0D {
            return index + 1 < bytes.count && bytes[index + 1] == 0x0A ? [0x0D, 0x0A] : [0x0D]
        }
        return [0x0A]
    }

    private static func isLineBreak(_ byte: UInt8) -> Bool { byte == 0x0A || byte == 0x0D }

    /// The offset where the line containing `offset` begins.
    private static func lineStart(of offset: Int, in bytes: [UInt8]) -> Int {
        var start = offset
        while start > 0, !isLineBreak(bytes[start - 1]) { start -= 1 }
        return start
    }

    /// The spaces and tabs that begin the line containing `offset`.
    private static func indentation(ofLineAt offset: Int, in bytes: [UInt8]) -> [UInt8] {
        var end = lineStart(of: offset, in: bytes)
        let start = end
        while end < offset, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        return Array(bytes[start..<end])
    }

    /// `s` as a JSON string literal.
    static func quote(_ s: String) -> String { JSONWriter.quoted(s) }
}

/// The top-level object of a document: where it opens and closes, and its members.
struct TopLevelObject {
    struct Member {
        /// The decoded key.
        var key: [Unicode.Scalar]
        /// Offset of the key's opening quote.
        var keyStart: Int
        /// Offset just past the key's closing quote.
        var keyEnd: Int
        var valueStart: Int
        var valueEnd: Int
    }

    var open: Int
    var close: Int
    var members: [Member]

    /// Scans a whole document, which must be exactly one JSON object (an optional
    /// UTF-8 byte order mark and surrounding whitespace allowed).
    static func scan(_ bytes: [UInt8]) throws(ManifestEditError) -> TopLevelObject {
        var scanner = JSONScanner(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.position = 3 }
        scanner.skipWhitespace()
        guard let first = scanner.current else { throw scanner.failure("the document is empty") }
        guard first == UInt8(ascii: "{") else {
            // Another kind of value: notAnObject if the document is otherwise well-formed.
            guard [UInt8]("[\"-0123456789tfn".utf8).contains(first) else {
                throw scanner.failure("expected '{', found \(scanner.describeCurrent())")
            }
            try scanner.scanValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.atEnd else {
                throw scanner.failure("unexpected \(scanner.describeCurrent()) after the top-level value")
            }
            throw .notAnObject
        }
        let open = scanner.position
        scanner.position += 1
        var members: [Member] = []
        scanner.skipWhitespace()
        if scanner.current == UInt8(ascii: "}") {
            // empty object
        } else {
            while true {
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: "\"") else {
                    throw scanner.failure("expected a member name in double quotes, found \(scanner.describeCurrent())")
                }
                let keyStart = scanner.position
                let key = try scanner.scanString()
                let keyEnd = scanner.position
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: ":") else {
                    throw scanner.failure("expected ':' after a member name, found \(scanner.describeCurrent())")
                }
                scanner.position += 1
                scanner.skipWhitespace()
                let valueStart = scanner.position
                try scanner.scanValue(depth: 1)
                members.append(Member(key: key, keyStart: keyStart, keyEnd: keyEnd,
                                      valueStart: valueStart, valueEnd: scanner.position))
                scanner.skipWhitespace()
                if scanner.current == UInt8(ascii: ",") {
                    scanner.position += 1
                    continue
                }
                guard scanner.current == UInt8(ascii: "}") else {
                    throw scanner.failure("expected ',' or '}' in the object, found \(scanner.describeCurrent())")
                }
                break
            }
        }
        let close = scanner.position
        scanner.position += 1
        scanner.skipWhitespace()
        guard scanner.atEnd else {
            throw scanner.failure("unexpected \(scanner.describeCurrent()) after the top-level object")
        }
        return TopLevelObject(open: open, close: close, members: members)
    }
}

/// A strict RFC 8259 scanner over UTF-8 bytes. It checks syntax and finds where
/// values end; it builds nothing except decoded strings on request.
private struct JSONScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }
    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    /// `what` at the current position, as line:column (both from 1; columns count unicode scalars).
    func failure(_ what: String, at offset: Int? = nil) -> ManifestEditError {
        let offset = Swift.min(offset ?? position, bytes.count)
        var line = 1
        var column = 1
        for byte in bytes[..<offset] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // not a UTF-8 continuation byte
                column += 1
            }
        }
        return .malformed("\(what) at \(line):\(column)")
    }

    /// The character at the current position, for messages.
    func describeCurrent() -> String {
        guard let byte = current else { return "end of input" }
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let scalar = String(decoding: bytes[position..<Swift.min(position + 4, bytes.count)], as: UTF8.self)
            .unicodeScalars.first!
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
    }

    mutating func scanValue(depth: Int) throws(ManifestEditError) {
        guard let byte = current else { throw failure("expected a value, found end of input") }
        switch byte {
        case UInt8(ascii: "{"): try scanObject(depth: depth + 1)
        case UInt8(ascii: "["): try scanArray(depth: depth + 1)
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try scanNumber()
        case UInt8(ascii: "t"): try scanLiteral("true")
        case UInt8(ascii: "f"): try scanLiteral("false")
        case UInt8(ascii: "n"): try scanLiteral("null")
        default: throw failure("expected a value, found \(describeCurrent())")
        }
    }

    private mutating func checkDepth(_ depth: Int) throws(ManifestEditError) {
        if depth > ManifestEditor.maximumDepth {
            throw failure("arrays and objects nested deeper than \(ManifestEditor.maximumDepth)")
        }
    }

    mutating func scanObject(depth: Int) throws(ManifestEditError) {
        try checkDepth(depth)
        position += 1  // {
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw failure("expected a member name in double quotes, found \(describeCurrent())")
            }
            _ = try scanString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw failure("expected ':' after a member name, found \(describeCurrent())")
            }
            position += 1
            skipWhitespace()
            try scanValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return
            default: throw failure("expected ',' or '}' in an object, found \(describeCurrent())")
            }
        }
    }

    mutating func scanArray(depth: Int) throws(ManifestEditError) {
        try checkDepth(depth)
        position += 1  // [
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            try scanValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return
            default: throw failure("expected ',' or ']' in an array, found \(describeCurrent())")
            }
        }
    }

    /// Scans a string starting at its opening quote; returns its decoded scalars.
    /// An escape of an unpaired UTF-16 surrogate is refused, as Foundation's parsers do.
    mutating func scanString() throws(ManifestEditError) -> [Unicode.Scalar] {
        let start = position
        position += 1  // "
        var scalars: [Unicode.Scalar] = []
        var literalStart = position
        func flushLiteral(upTo end: Int) {
            if literalStart < end {
                scalars += String(decoding: bytes[literalStart..<end], as: UTF8.self).unicodeScalars
            }
        }
        while true {
            guard let byte = current else { throw failure("unterminated string that starts", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                flushLiteral(upTo: position)
                position += 1
                return scalars
            case UInt8(ascii: "\\"):
                flushLiteral(upTo: position)
                let escape = position
                position += 1
                guard let kind = current else { throw failure("unterminated string that starts", at: start) }
                position += 1
                switch kind {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    let unit = try hex4(escapeAt: escape)
                    if let scalar = Unicode.Scalar(unit) {
                        scalars.append(scalar)
                    } else if unit <= 0xDBFF, position + 1 < bytes.count,
                              bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                        position += 2
                        let low = try hex4(escapeAt: position - 2)
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw failure("unpaired UTF-16 surrogate in a \\u escape", at: escape)
                        }
                        scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!)
                    } else {
                        throw failure("unpaired UTF-16 surrogate in a \\u escape", at: escape)
                    }
                default:
                    position = escape
                    throw failure("invalid escape '\\\(Character(Unicode.Scalar(kind)))' in a string")
                }
                literalStart = position
            case 0x00..<0x20:
                throw failure("unescaped control character U+00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true)) in a string")
            default:
                position += 1
            }
        }
    }

    /// The four hex digits after `\u` (the position is just past the `u`).
    private mutating func hex4(escapeAt escape: Int) throws(ManifestEditError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw failure("incomplete \\u escape in a string", at: escape) }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("\\u escape needs four hex digits", at: escape)
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    mutating func scanNumber() throws(ManifestEditError) {
        let start = position
        func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
        if current == UInt8(ascii: "-") { position += 1 }
        guard isDigit(current) else { throw failure("invalid number: expected a digit, found \(describeCurrent())") }
        if current == UInt8(ascii: "0") {
            position += 1
            if isDigit(current) { throw failure("invalid number: leading zero", at: start) }
        } else {
            while isDigit(current) { position += 1 }
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard isDigit(current) else { throw failure("invalid number: expected a digit after '.', found \(describeCurrent())") }
            while isDigit(current) { position += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard isDigit(current) else { throw failure("invalid number: expected a digit in the exponent, found \(describeCurrent())") }
            while isDigit(current) { position += 1 }
        }
    }

    mutating func scanLiteral(_ word: String) throws(ManifestEditError) {
        let start = position
        for byte in word.utf8 {
            guard current == byte else {
                throw failure("invalid literal: expected '\(word)'", at: start)
            }
            position += 1
        }
    }
}
