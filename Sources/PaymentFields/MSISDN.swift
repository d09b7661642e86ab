/// A mobile number (MSISDN) in E.164, `+` and the country code and the
/// national number, from what a payer types, given the country to assume
/// when the number has no country code.
///
/// Arabic-Indic digits count as digits; spaces, `-`, `.`, `/`, parentheses
/// and a `(0)` or `0` after the country code go;
/// `00` becomes `+`; a leading trunk `0` is replaced by the default
/// country's code, and a national number typed without it gains the code
/// too. The result must be `+` and 8 to 15 digits; for a country in
/// ``countries`` its national number must also have the country's length
/// and start like one of its mobile numbers.
public enum MSISDN {
    public struct Country: Sendable, Equatable {
        public var code: String
        /// Digits after the country code.
        public var length: ClosedRange<Int>
        /// What a mobile national number starts with.
        public var mobilePrefixes: [String]
    }

    /// Mobile numbering of the countries the shipped providers serve (ITU-T
    /// E.164 assignments and the national numbering plans).
    public static let countries: [String: Country] = [
        "SA": Country(code: "966", length: 9...9, mobilePrefixes: ["5"]),
        "AE": Country(code: "971", length: 9...9, mobilePrefixes: ["5"]),
        "KW": Country(code: "965", length: 8...8, mobilePrefixes: ["4", "5", "6", "9"]),
        "BH": Country(code: "973", length: 8...8, mobilePrefixes: ["3", "66"]),
        "OM": Country(code: "968", length: 8...8, mobilePrefixes: ["7", "9"]),
        "QA": Country(code: "974", length: 8...8, mobilePrefixes: ["3", "5", "6", "7"]),
        "JO": Country(code: "962", length: 9...9, mobilePrefixes: ["7"]),
        "SE": Country(code: "46", length: 9...9, mobilePrefixes: ["7"]),
        "NO": Country(code: "47", length: 8...8, mobilePrefixes: ["4", "9"]),
        "DK": Country(code: "45", length: 8...8, mobilePrefixes: ["2", "3", "4", "5", "6", "7", "8", "9"]),
        "FI": Country(code: "358", length: 7...10, mobilePrefixes: ["4", "50"]),
    ]

    /// `typed` as `+<country code><national number>`, or nil when it is not
    /// a mobile number (of `defaultCountry`, when it names a known country
    /// and the number carries that country's code).
    /// `text` with Arabic-Indic and extended Arabic-Indic digits (as Gulf
    /// keyboards type them) as ASCII digits, and invisible format characters
    /// (bidi marks pasted from a right-to-left page) removed.
    public static func westernDigits(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.compactMap { scalar in
            switch scalar.value {
            case 0x0660...0x0669: Unicode.Scalar(scalar.value - 0x0660 + 48)!
            case 0x06F0...0x06F9: Unicode.Scalar(scalar.value - 0x06F0 + 48)!
            default: scalar.properties.generalCategory == .format ? nil : scalar
            }
        }))
    }

    /// Whether `number` (as ``normalised(_:defaultCountry:)`` answers) is of
    /// one of `countries` (ISO 3166 codes of ``countries``).
    public static func isOf(_ number: String, countries allowed: [String]) -> Bool {
        allowed.contains { code in countries[code].map { number.hasPrefix("+" + $0.code) } ?? false }
    }

    public static func normalised(_ typed: String, defaultCountry: String?) -> String? {
        var text = westernDigits(typed)
        text = text.replacingOccurrences(of: "(0)", with: "")
        text = String(text.filter { !" -.()/\u{00A0}\u{202F}\t".contains($0) })
        let country = defaultCountry.flatMap { countries[$0.uppercased()] }
        if text.hasPrefix("00") {
            text = "+" + text.dropFirst(2)
        } else if !text.hasPrefix("+"), let country {
            if text.hasPrefix("0") {
                text = "+" + country.code + text.dropFirst()
            } else if text.hasPrefix(country.code), country.length.contains(text.count - country.code.count) {
                text = "+" + text
            } else {
                text = "+" + country.code + text
            }
        }
        // A trunk 0 typed after the country code (`+966 050…`) goes.
        for (_, known) in countries where text.hasPrefix("+" + known.code + "0") {
            text = "+" + known.code + text.dropFirst(known.code.count + 2)
        }
        let digits = text.dropFirst()
        guard text.hasPrefix("+"), (8...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        // A known country's numbers are checked against its plan.
        for (_, known) in countries where digits.hasPrefix(known.code) {
            let national = digits.dropFirst(known.code.count)
            guard known.length.contains(national.count), known.mobilePrefixes.contains(where: { national.hasPrefix($0) }) else { return nil }
        }
        return text
    }
}
