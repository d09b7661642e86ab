import Foundation
import GatewayPayloads

/// What the first digits of a card tell a checkout: its brand, the brands
/// it is co-badged with, and for each whether the checkout may take it
/// (the shape of a device SDK's IIN details, so its forms map 1:1).
public struct IINDetails: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        /// The card's brand, or one of its co-brands, may pay here.
        case supported
        /// Six digits that belong to no known range.
        case unknown
        /// Fewer than six digits: nothing can be told yet.
        case notEnoughDigits
        /// A known card that no brand of which may pay here.
        case existingButNotAllowed
    }

    public struct Brand: Sendable, Hashable {
        public var brand: String
        public var allowed: Bool
        public init(brand: String, allowed: Bool) { self.brand = brand; self.allowed = allowed }
    }

    public var status: Status
    /// The first six digits (never more), when there were six.
    public var iin: String?
    /// The range's brand (the most specific range), when known.
    public var brand: Brand?
    /// The other brands the card carries, in the data file's order.
    public var coBrands: [Brand]

    public init(status: Status, iin: String?, brand: Brand?, coBrands: [Brand]) {
        self.status = status; self.iin = iin; self.brand = brand; self.coBrands = coBrands
    }
}

/// A prefix that is not the start of a card number.
public struct IINPrefixError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

extension IINRanges {
    /// The longest prefix read: a card number's nineteen digits; a client
    /// that sends more has not sent a card number's start.
    public static let longestPrefix = 19

    /// Reads a typed prefix: ASCII or Arabic-Indic digits, with spaces and
    /// hyphens as a mask writes them. Answers the digits a lookup reads: the
    /// first eight at most.
    public static func iinDigits(of prefix: String) throws(IINPrefixError) -> String {
        let digits = MSISDN.westernDigits(prefix).filter { $0 != " " && $0 != "-" && $0 != "\u{00A0}" }
        guard digits.utf8.allSatisfy(isDigit) else {
            throw IINPrefixError(description: "prefix must be the digits of a card number's start (spaces and hyphens allowed)")
        }
        guard digits.utf8.count <= longestPrefix else {
            throw IINPrefixError(description: "prefix must be at most \(longestPrefix) digits")
        }
        return String(digits.prefix(digitsRead))
    }

    /// The details of `prefix`, `allowed` telling whether a brand (a method
    /// id) may pay in the caller's context.
    public func details(of prefix: String, allowed: (String) -> Bool) throws(IINPrefixError) -> IINDetails {
        let digits = try Self.iinDigits(of: prefix)
        guard digits.count >= Self.digitsNeeded else { return IINDetails(status: .notEnoughDigits, iin: nil, brand: nil, coBrands: []) }
        let iin = String(digits.prefix(Self.digitsNeeded))
        guard let range = range(of: digits) else { return IINDetails(status: .unknown, iin: iin, brand: nil, coBrands: []) }
        let brand = IINDetails.Brand(brand: range.brand, allowed: allowed(range.brand))
        let coBrands = range.coBrands.map { IINDetails.Brand(brand: $0, allowed: allowed($0)) }
        let anyAllowed = brand.allowed || coBrands.contains(where: \.allowed)
        return IINDetails(status: anyAllowed ? .supported : .existingButNotAllowed, iin: iin, brand: brand, coBrands: coBrands)
    }
}

extension IINDetails {
    /// The answer's JSON: `{"status", "iin"?, "brand"?, "allowed"?, "coBrands": [{"brand", "allowed"}]}`.
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["status": .string(status.rawValue),
                                           "coBrands": .array(coBrands.map { .object(["brand": .string($0.brand), "allowed": .bool($0.allowed)]) })]
        if let iin { object["iin"] = .string(iin) }
        if let brand {
            object["brand"] = .string(brand.brand)
            object["allowed"] = .bool(brand.allowed)
        }
        return .object(object)
    }

    /// ``jsonValue`` as compact bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter()
        writer.value(jsonValue)
        return writer.bytes
    }
}
