/// Writes compact JSON straight into bytes: the hot-path encoder for payload
/// documents (Foundation's JSONEncoder costs several microseconds per document).
///
/// Commas are placed automatically: a member or element written after another
/// one in the same container gets one.
public struct JSONWriter: Sendable {
    public internal(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func separate() {
        if let last = bytes.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "["), last != UInt8(ascii: ":") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
    }

    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }

    /// Writes `json`, one complete value already encoded by this writer (a
    /// form computed once per manifests snapshot), as the next value.
    public mutating func encoded(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Writes `members`, one or more object members (`"a":1,"b":2`) already
    /// encoded by this writer, as the next members of the open object.
    public mutating func encodedMembers(_ members: [UInt8]) {
        guard !members.isEmpty else { return }
        separate()
        bytes.append(contentsOf: members)
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
    }

    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Writes `"name":` (a member's key); the value follows.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a dynamic key (escaped).
    public mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `value` as a JSON string literal.
    public static func quoted(_ value: String) -> String {
        var writer = JSONWriter(capacity: value.utf8.count + 2)
        writer.string(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func integer(_ value: Int64) {
        separate()
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    public mutating func double(_ value: Double) {
        if value.isFinite, value.rounded() == value, abs(value) < 1e15 {
            integer(Int64(value))
        } else if value.isFinite {
            separate()
            bytes.append(contentsOf: "\(value)".utf8)
        } else {
            null()
        }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    /// `"name":"value"`, or nothing when `value` is nil.
    public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        integer(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        integer(Int64(value))
    }

    public mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    public mutating func member<P: JSONPayload>(_ name: StaticString, _ value: P?) {
        guard let value else { return }
        key(name)
        value.write(to: &self)
    }

    public mutating func member(_ name: StaticString, _ value: [String: String]?) {
        guard let value else { return }
        key(name)
        beginObject()
        for (k, v) in value.sorted(by: { $0.key < $1.key }) {
            key(k)
            string(v)
        }
        endObject()
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .integer(let i): integer(i)
        case .number(let n):
            // A number read with a fraction or exponent stays one when written
            // again (`5.0`, not `5`), so a tree reads back equal.
            if n.isFinite, n.rounded() == n {
                separate()
                bytes.append(contentsOf: "\(n)".utf8)
            } else {
                double(n)
            }
        case .string(let s): string(s)
        case .array(let a):
            beginArray()
            for element in a { self.value(element) }
            endArray()
        case .object(let o):
            beginObject()
            for (k, v) in o.sorted(by: { $0.key < $1.key }) {
                key(k)
                self.value(v)
            }
            endObject()
        }
    }
}
