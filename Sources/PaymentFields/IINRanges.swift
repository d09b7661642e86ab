import Foundation
import GatewayPayloads

/// Card ranges by issuer identification number (the first digits of a card
/// number): the brand a prefix belongs to and the brands it is co-badged
/// with (a mada card is also a Visa or a Mastercard). Read from
/// `iin-ranges.json`, whose `sources` name where each range comes from.
///
/// A lookup needs six digits and reads at most eight (a scheme may split a
/// six-digit BIN: `40545400` is mada, the rest of `405454` plain Visa); it
/// answers, and so anything downstream keeps, six at most. The most specific
/// range wins: `440647` (mada, co-badged Visa) over `4` (Visa).
public struct IINRanges: Sendable {
    /// One range: every prefix whose first `low.count` digits lie between
    /// `low` and `high` (as numbers of that many digits).
    public struct Range: Sendable, Hashable {
        public var low: String
        public var high: String
        public var brand: String
        /// Other brands the cards of the range carry too (co-badged).
        public var coBrands: [String]
    }

    /// Where ranges come from, as the data file names it.
    public struct Source: Sendable, Hashable {
        public var name: String
        public var url: String
        public var covers: String
    }

    public static let digitsNeeded = 6
    /// The longest range: eight digits.
    public static let digitsRead = 8

    public let ranges: [Range]
    public let sources: [Source]

    /// The ranges this module ships (`iin-ranges.json`, embedded at build time).
    public static let shipped: Result<IINRanges, IINRangesError> = Result { () throws(IINRangesError) in
        try IINRanges(json: Data(PackageResources.iin_ranges_json))
    }

    public init(ranges: [Range], sources: [Source]) throws(IINRangesError) {
        for (index, range) in ranges.enumerated() {
            let at = "ranges[\(index)]"
            guard !range.low.isEmpty, range.low.count <= Self.digitsRead, range.low.utf8.allSatisfy(Self.isDigit),
                  range.high.count == range.low.count, range.high.utf8.allSatisfy(Self.isDigit), range.low <= range.high else {
                throw IINRangesError(at: at, "a range is 1 to \(Self.digitsRead) digits, its low and high of one length, low <= high")
            }
            guard Self.isBrand(range.brand), range.coBrands.allSatisfy(Self.isBrand) else {
                throw IINRangesError(at: at, "brands are method ids: lowercase letters and digits")
            }
            guard !range.coBrands.contains(range.brand), Set(range.coBrands).count == range.coBrands.count else {
                throw IINRangesError(at: at, "coBrands repeats a brand")
            }
        }
        // Two ranges of one length that overlap would make a lookup's answer
        // depend on the file's order: refuse them.
        let byLength = Dictionary(grouping: ranges.indices, by: { ranges[$0].low.count })
        for indices in byLength.values {
            let sorted = indices.sorted { ranges[$0].low < ranges[$1].low }
            for (a, b) in zip(sorted, sorted.dropFirst()) where ranges[b].low <= ranges[a].high {
                throw IINRangesError(at: "ranges[\(b)]", "overlaps ranges[\(a)] (\(ranges[a].low)-\(ranges[a].high))")
            }
        }
        self.ranges = ranges
        self.sources = sources
    }

    /// The most specific range holding `digits` (of which it reads eight at
    /// most), or nil (unknown).
    /// - Precondition: `digits` holds ASCII digits only.
    public func range(of digits: some StringProtocol) -> Range? {
        let iin = String(digits.prefix(Self.digitsRead))
        var best: Range?
        for range in ranges where range.low.count <= iin.count {
            let head = String(iin.prefix(range.low.count))
            guard range.low <= head, head <= range.high else { continue }
            if best == nil || range.low.count > best!.low.count { best = range }
        }
        return best
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static func isBrand(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 40 && text.utf8.allSatisfy { isDigit($0) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) }
    }
}

/// What is wrong with a ranges file, and where.
public struct IINRangesError: Error, Sendable, CustomStringConvertible {
    public var at: String
    public var reason: String
    init(at: String, _ reason: String) { self.at = at; self.reason = reason }
    public var description: String { "iin-ranges.json \(at): \(reason)" }
}

extension IINRanges {
    /// Reads the data file: `{"format": 1, "sources": [{name, url, covers}],
    /// "ranges": [{"prefix": "4", "brand": "visa"} | {"from": "2221", "to": "2720", "brand": "mastercard"},
    /// optionally "coBrands": ["visa"]]}`.
    public init(json: Data) throws(IINRangesError) {
        let root: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONValue.parseDocument(json) else { throw IINRangesError(at: "(root)", "not a JSON object") }
            root = object
        } catch let error as IINRangesError { throw error } catch { throw IINRangesError(at: "(root)", "not JSON: \(error)") }
        guard root["format"] == .integer(1) else { throw IINRangesError(at: "format", "must be 1") }
        guard let sourceList = root["sources"]?.arrayValue, !sourceList.isEmpty else {
            throw IINRangesError(at: "sources", "name at least one source")
        }
        var sources: [Source] = []
        for (index, entry) in sourceList.enumerated() {
            guard let name = entry["name"]?.stringValue, !name.isEmpty, let url = entry["url"]?.stringValue, !url.isEmpty,
                  let covers = entry["covers"]?.stringValue else {
                throw IINRangesError(at: "sources[\(index)]", "a source has a name, a url and what it covers")
            }
            sources.append(Source(name: name, url: url, covers: covers))
        }
        guard let list = root["ranges"]?.arrayValue else { throw IINRangesError(at: "ranges", "must be an array of ranges") }
        var ranges: [Range] = []
        for (index, entry) in list.enumerated() {
            let at = "ranges[\(index)]"
            guard let brand = entry["brand"]?.stringValue else { throw IINRangesError(at: at, "brand is missing") }
            let coBrands = entry["coBrands"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if let prefix = entry["prefix"]?.stringValue, entry["from"] == nil, entry["to"] == nil {
                ranges.append(Range(low: prefix, high: prefix, brand: brand, coBrands: coBrands))
            } else if let from = entry["from"]?.stringValue, let to = entry["to"]?.stringValue, entry["prefix"] == nil {
                ranges.append(Range(low: from, high: to, brand: brand, coBrands: coBrands))
            } else {
                throw IINRangesError(at: at, "give either prefix or from and to, as strings of digits")
            }
        }
        try self.init(ranges: ranges, sources: sources)
    }
}
