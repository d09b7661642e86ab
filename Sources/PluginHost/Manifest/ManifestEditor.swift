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
        let span = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> Range<Int> in
                var parser = JSONParser(buffer, maximumDepth: maximumDepth)
                let start = parser.skipWhitespaceAndTell()
                guard !parser.atEnd() else { throw parser.error("expected a JSON value, found end of input") }
                try parser.skipValue()
                let end = parser.position
                guard parser.atEnd() else { throw parser.error("unexpected \(parser.describeNext()) after the value") }
                return start..<end
            }
        }
        switch span {
        case .success(let range): return Array(bytes[range])
        case .failure(let error): throw .malformed("the new value is not a single JSON value: \(error)")
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
    /// UTF-8 byte order mark and surrounding whitespace allowed), with the one
    /// parser (``JSONParser``), recording where each top-level member lies.
    static func scan(_ bytes: [UInt8]) throws(ManifestEditError) -> TopLevelObject {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> TopLevelObject? in
                var parser = JSONParser(buffer, maximumDepth: ManifestEditor.maximumDepth)
                parser.skipByteOrderMark()
                guard let first = parser.nextByte() else { throw parser.error("the document is empty") }
                guard first == UInt8(ascii: "{") else {
                    // Another kind of value: not an object if the document is otherwise well-formed.
                    guard Array("[\"-0123456789tfn".utf8).contains(first) else {
                        throw parser.error("expected '{', found \(parser.describeNext())")
                    }
                    try parser.skipValue()
                    guard parser.atEnd() else { throw parser.error("unexpected \(parser.describeNext()) after the top-level value") }
                    return nil
                }
                let open = parser.skipWhitespaceAndTell()
                var members: [Member] = []
                try parser.objectMembers { key, keyStart, keyEnd, parser throws(JSONParseError) in
                    let valueStart = parser.skipWhitespaceAndTell()
                    try parser.skipValue()
                    members.append(Member(key: Array(key.unicodeScalars), keyStart: keyStart, keyEnd: keyEnd,
                                          valueStart: valueStart, valueEnd: parser.position))
                }
                let close = parser.position - 1
                guard parser.atEnd() else { throw parser.error("unexpected \(parser.describeNext()) after the top-level object") }
                return TopLevelObject(open: open, close: close, members: members)
            }
        }
        switch result {
        case .success(let object?): return object
        case .success(nil): throw .notAnObject
        case .failure(let error): throw .malformed(error.description)
        }
    }
}
