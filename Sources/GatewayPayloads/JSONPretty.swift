/// Compact JSON, as ``JSONWriter`` writes it, re-indented for people: the
/// CLI's `--json` output.
///
/// Two spaces per level, one member or element per line, `"key": value`,
/// empty objects and arrays as `{}` and `[]`. Member order and strings are
/// kept byte for byte. A pure byte walk: the input is not parsed or checked,
/// and whitespace outside strings is dropped, so already indented input is
/// re-indented the same way. No newline is added after the last byte.
public enum JSONPretty {
    public static func indented(_ compact: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(compact.count + compact.count / 2 + 16)
        var depth = 0
        var inString = false
        var escaped = false
        var index = 0
        let count = compact.count
        while index < count {
            let byte = compact[index]
            index += 1
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == backslash {
                    escaped = true
                } else if byte == quote {
                    inString = false
                }
                continue
            }
            switch byte {
            case quote:
                inString = true
                out.append(byte)
            case openObject, openArray:
                out.append(byte)
                let close = byte == openObject ? closeObject : closeArray
                var next = index
                while next < count, isWhitespace(compact[next]) { next += 1 }
                if next < count, compact[next] == close {
                    // Empty: `{}` or `[]` on the line it opens.
                    out.append(close)
                    index = next + 1
                } else {
                    depth += 1
                    newline(&out, depth: depth)
                }
            case closeObject, closeArray:
                depth = max(depth - 1, 0)
                newline(&out, depth: depth)
                out.append(byte)
            case comma:
                out.append(byte)
                newline(&out, depth: depth)
            case colon:
                out.append(byte)
                out.append(space)
            case _ where isWhitespace(byte):
                break
            default:
                out.append(byte)
            }
        }
        return out
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")
    private static let openObject = UInt8(ascii: "{")
    private static let closeObject = UInt8(ascii: "}")
    private static let openArray = UInt8(ascii: "[")
    private static let closeArray = UInt8(ascii: "]")
    private static let comma = UInt8(ascii: ",")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A line break, then two spaces per level.
    @inline(__always)
    private static func newline(_ out: inout [UInt8], depth: Int) {
        out.append(0x0A)
        for _ in 0..<depth {
            out.append(space)
            out.append(space)
        }
    }
}
