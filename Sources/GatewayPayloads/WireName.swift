/// A value with identity whose wire form is one string: a problem code, an
/// event kind. Code compares and switches on its static members; JSON
/// carries the raw string; a raw string nobody declared is kept as read.
public protocol WireName: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension WireName {
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
