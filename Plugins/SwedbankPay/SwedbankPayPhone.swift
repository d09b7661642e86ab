/// A Swedish mobile number as Swish takes it, from what a payer types:
/// `+46` and nine digits starting with 7, no spaces.
///
/// Spaces, `-`, `.` and parentheses go, and so does a `(0)` after the
/// country code; `00` becomes `+`; a leading `0` is the Swedish trunk prefix
/// (`+46`); a bare `46…` of eleven digits gains its `+`. Anything else is
/// not a number Swish can take.
enum SwedbankPayPhone {
    static func normalised(_ typed: String) -> String? {
        var text = typed.replacingOccurrences(of: "(0)", with: "")
        text = String(text.filter { !" -.()\u{00A0}".contains($0) })
        if text.hasPrefix("00") { text = "+" + text.dropFirst(2) }
        else if text.hasPrefix("0") { text = "+46" + text.dropFirst() }
        else if text.hasPrefix("46"), text.count == 11 { text = "+" + text }
        guard text.hasPrefix("+467"), text.count == 12, text.dropFirst().allSatisfy(\.isASCII), text.dropFirst().allSatisfy(\.isNumber) else { return nil }
        return text
    }

    /// The number with only its country code and last two digits shown:
    /// `+46 7* *** **67`.
    static func masked(_ number: String) -> String {
        guard number.count == 12 else { return "+** ** *** ****" }
        return "+46 7* *** **" + number.suffix(2)
    }
}
