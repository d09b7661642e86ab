import Foundation

/// A rule a field's value must keep. Each sees the value unmasked (see
/// ``Mask/unmasked(_:)``) and trimmed; an empty value is only ever
/// "required" (``FieldValidation``). Names and parameters follow Worldline's
/// payment product fields (`dataRestrictions.validators`), so a device
/// SDK's form maps 1:1; the rules themselves are ours (docs/fields.md).
public enum Validator: Sendable, Hashable {
    /// 12 to 19 digits (spaces and `-` between them allowed) passing the mod-10 check.
    case luhn
    /// `MMYY` or `MMYYYY` (separators ignored), this month or later (UTC;
    /// on a month's first day last month too), and at most December of the
    /// year 25 years from now.
    case expirationDate
    case emailAddress
    /// 15 to 34 letters and digits (spaces ignored, case folded), two letters
    /// and two check digits (02 to 98) first, passing ISO 13616's mod 97.
    case iban
    /// At least `min`, at most `max` characters, both inclusive.
    case length(min: Int, max: Int)
    /// An integer from `min` to `max`, both inclusive.
    case range(min: Int64, max: Int64)
    /// A match anywhere in the value (not anchored: write `^…$` to anchor).
    case regularExpression(String)
    /// One of `values`, exactly (case-sensitive).
    case fixedList([String])
    /// `true` only: the payer accepted the terms.
    case termsAndConditions
    /// A mobile number (``MSISDN``), national numbers read in
    /// `defaultCountry`; when `countries` is not empty, of one of them (the
    /// provider's: Swish takes Swedish numbers only).
    case msisdn(defaultCountry: String?, countries: [String] = [])

    /// The name as manifests write it.
    public var name: String {
        switch self {
        case .luhn: "luhn"
        case .expirationDate: "expirationDate"
        case .emailAddress: "emailAddress"
        case .iban: "iban"
        case .length: "length"
        case .range: "range"
        case .regularExpression: "regularExpression"
        case .fixedList: "fixedList"
        case .termsAndConditions: "termsAndConditions"
        case .msisdn: "msisdn"
        }
    }

    /// Whether `value` keeps the rule, `now` (UTC) for expiry dates.
    public func accepts(_ value: String, now: Date) -> Bool {
        switch self {
        case .luhn: return Self.luhn(value)
        case .expirationDate: return Self.expiry(value, now: now)
        case .emailAddress: return Self.email(value)
        case .iban: return Self.iban(value)
        case .length(let min, let max): return (min...max).contains(value.count)
        case .range(let min, let max): return Int64(value).map { (min...max).contains($0) } ?? false
        case .regularExpression(let pattern): return value.range(of: pattern, options: .regularExpression) != nil
        case .fixedList(let values): return values.contains(value)
        case .termsAndConditions: return value == "true"
        case .msisdn(let country, let allowed):
            guard let number = MSISDN.normalised(value, defaultCountry: country) else { return false }
            return allowed.isEmpty || MSISDN.isOf(number, countries: allowed)
        }
    }

    static func luhn(_ value: String) -> Bool {
        let kept = value.filter { $0 != " " && $0 != "-" }
        return (12...19).contains(kept.count) && Luhn.passes(kept)
    }

    static func expiry(_ value: String, now: Date) -> Bool {
        let digits = value.filter { $0.isASCII && $0.isNumber }
        guard value.allSatisfy({ ($0.isASCII && $0.isNumber) || " /-.".contains($0) }), digits.count == 4 || digits.count == 6,
              let month = Int(digits.prefix(2)), (1...12).contains(month), var year = Int(digits.dropFirst(2)) else { return false }
        if digits.count == 4 { year += 2000 }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let today = calendar.dateComponents([.year, .month], from: now)
        guard let thisYear = today.year, let thisMonth = today.month else { return false }
        // On the first day of a month (UTC), last month still passes: it is
        // last month still for a payer west of UTC.
        let day = calendar.component(.day, from: now)
        let earliest = day == 1 ? (thisMonth == 1 ? (thisYear - 1, 12) : (thisYear, thisMonth - 1)) : (thisYear, thisMonth)
        return (year, month) >= earliest && year <= thisYear + 25
    }

    static func email(_ value: String) -> Bool {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, value.count <= 254, !value.contains(where: { $0.isWhitespace || $0 == "\"" }) else { return false }
        let local = parts[0], domain = parts[1]
        guard !local.isEmpty, local.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, let top = labels.last, top.count >= 2, top.allSatisfy(\.isLetter) else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        }
    }

    static func iban(_ value: String) -> Bool {
        let text = value.filter { $0 != " " }.uppercased()
        guard (15...34).contains(text.count), text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return false }
        let chars = Array(text)
        guard chars[0].isLetter, chars[1].isLetter, chars[2].isNumber, chars[3].isNumber,
              let check = Int(String(chars[2...3])), (2...98).contains(check) else { return false }
        var remainder = 0
        for character in chars[4...] + chars[..<4] {
            let ascii = Int(character.asciiValue!)
            let value = character.isNumber ? ascii - 48 : ascii - 55
            remainder = (value < 10 ? remainder * 10 + value : remainder * 100 + value) % 97
        }
        return remainder == 1
    }
}
