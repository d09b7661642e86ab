/// An ISO 4217 currency and its minor-unit exponent: how many decimal places
/// its minor units stand for (SAR 2: 1000 = 10.00; KWD 3: 1234 = 1.234; JPY 0).
///
/// Only the currencies in ``Currency/known`` exist here: an unknown code is
/// refused rather than guessed, since a wrong exponent moves money by 10× or 1000×.
public struct Currency: Sendable, Hashable, CustomStringConvertible {
    public let code: String
    public let exponent: Int

    /// The currencies the product knows, with their ISO 4217 exponents.
    public static let known: [String: Int] = [
        "SAR": 2, "AED": 2, "QAR": 2, "USD": 2, "EUR": 2, "GBP": 2, "SEK": 2, "NOK": 2, "DKK": 2, "EGP": 2, "CHF": 2,
        "KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3,
        "JPY": 0,
    ]

    /// The ISO 4217 numeric code of each known currency (what wallet tokens carry: Apple Pay's `currencyCode`).
    public static let numericCodes: [String: String] = [
        "SAR": "682", "AED": "784", "QAR": "634", "USD": "840", "EUR": "978", "GBP": "826", "SEK": "752", "NOK": "578", "DKK": "208",
        "EGP": "818", "CHF": "756", "KWD": "414", "BHD": "048", "OMR": "512", "JOD": "400", "JPY": "392",
    ]

    /// This currency's ISO 4217 numeric code, e.g. `682` for SAR.
    public var numericCode: String { Self.numericCodes[code] ?? "" }

    /// The currency with `code`, or nil when it is not a known ISO 4217 code.
    public init?(code: String) {
        guard let exponent = Self.known[code] else { return nil }
        self.code = code
        self.exponent = exponent
    }

    public var description: String { code }

    /// 10 to the exponent: minor units in one major unit.
    public var minorUnitsPerMajor: Int64 {
        var n: Int64 = 1
        for _ in 0..<exponent { n *= 10 }
        return n
    }
}

/// Why an amount could not be read or written.
public enum MoneyError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownCurrency(String)
    case malformedDecimal(String)
    case tooManyDecimals(String, currency: String, allowed: Int)
    case outOfRange(String)

    public var description: String {
        switch self {
        case .unknownCurrency(let c): "\"\(c)\" is not a supported ISO 4217 currency (supported: \(Currency.known.keys.sorted().joined(separator: ", ")))"
        case .malformedDecimal(let s): "\"\(s)\" is not a decimal amount"
        case .tooManyDecimals(let s, let c, let allowed): "\"\(s)\" has more decimals than \(c) allows (\(allowed))"
        case .outOfRange(let s): "\"\(s)\" is out of range"
        }
    }
}

extension Money {
    /// The currency, if known.
    public var knownCurrency: Currency? { Currency(code: currency) }

    /// The amount as a decimal string in major units, with exactly the
    /// currency's decimals: `1234 KWD` -> `"1.234"`, `1000 SAR` -> `"10.00"`,
    /// `-5 USD` -> `"-0.05"`, `500 JPY` -> `"500"`. This is what providers that
    /// take decimal amounts are sent.
    public func decimalString() throws(MoneyError) -> String {
        guard let currency = knownCurrency else { throw .unknownCurrency(self.currency) }
        let negative = value < 0
        let magnitude = value.magnitude
        let unit = UInt64(currency.minorUnitsPerMajor)
        let major = magnitude / unit
        var text = (negative ? "-" : "") + String(major)
        if currency.exponent > 0 {
            let minor = String(magnitude % unit)
            text += "." + String(repeating: "0", count: currency.exponent - minor.count) + minor
        }
        return text
    }

    /// The amount with exactly `digits` decimals, for a provider whose format
    /// fixes them whatever the currency (OPPWA's two): `1230 KWD` -> `"1.23"`,
    /// `500 JPY` -> `"500.00"`. Throws ``MoneyError/tooManyDecimals(_:currency:allowed:)``
    /// when the amount needs more (`1234 KWD` cannot be written with two).
    public func decimalString(fractionDigits digits: Int) throws(MoneyError) -> String {
        precondition(digits >= 0, "a count of decimals is not negative")
        guard let currency = knownCurrency else { throw .unknownCurrency(self.currency) }
        let exact = try decimalString()
        guard digits != currency.exponent else { return exact }
        if digits > currency.exponent {
            return exact + (currency.exponent == 0 ? "." : "") + String(repeating: "0", count: digits - currency.exponent)
        }
        let dropped = currency.exponent - digits
        guard exact.suffix(dropped).allSatisfy({ $0 == "0" }) else {
            throw .tooManyDecimals(exact, currency: self.currency, allowed: digits)
        }
        let kept = String(exact.dropLast(dropped))
        return digits == 0 ? String(kept.dropLast()) : kept
    }

    /// Reads a decimal string in major units (`"1.234"` KWD -> 1234 minor
    /// units). Refuses more decimals than the currency has, exponents,
    /// separators and anything that is not a plain decimal number.
    public init(decimal text: String, currency code: String) throws(MoneyError) {
        guard let currency = Currency(code: code) else { throw .unknownCurrency(code) }
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
              parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit))
        else { throw .malformedDecimal(text) }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= currency.exponent else {
            throw .tooManyDecimals(text, currency: code, allowed: currency.exponent)
        }
        let padded = String(fraction) + String(repeating: "0", count: currency.exponent - fraction.count)
        guard let major = Int64(whole), let minor = Int64(padded.isEmpty ? "0" : padded) else { throw .outOfRange(text) }
        let (scaled, o1) = major.multipliedReportingOverflow(by: currency.minorUnitsPerMajor)
        let (sum, o2) = scaled.addingReportingOverflow(minor)
        guard !o1, !o2 else { throw .outOfRange(text) }
        self.init(value: negative ? -sum : sum, currency: code)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
