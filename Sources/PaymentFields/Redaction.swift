/// Masks what must never reach a log: card numbers keep only their last four
/// digits.
///
/// A *run* is a stretch of digits, optionally grouped by single spaces or
/// dashes (plain, percent-encoded, or a form's `+`). A run of 13 to 19 digits that passes the Luhn check is a card
/// number. A run that is not one itself but holds a card number somewhere
/// inside it (any 13 to 19 consecutive digits of it that pass the Luhn
/// check: `0041111111111111111`, a reference glued to a number) is masked
/// whole, but for its last four digits. That masks some long numbers that
/// hold no card (about one in ten windows passes Luhn by chance), which is the
/// side to err on: a log line with a masked order number is a nuisance, one
/// with a readable card number is a breach.
public enum Redaction {
    /// `text` with every card number masked, e.g. `4111 1111 1111 1111` -> `************1111`.
    public static func maskingCardNumbers(in text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            guard isDigit(scalars[i]), i == 0 || !isDigit(scalars[i - 1]) else {
                out.append(scalars[i])
                i += 1
                continue
            }
            // Collect a run of digits with single spaces or dashes between groups.
            var digits: [UInt8] = []
            var end = i
            var j = i
            while j < scalars.count {
                if isDigit(scalars[j]) {
                    digits.append(UInt8(scalars[j].value - 48))
                    j += 1
                    end = j
                } else if digits.count < 19, let width = separatorWidth(scalars, at: j), j + width < scalars.count, isDigit(scalars[j + width]) {
                    j += width
                } else {
                    break
                }
            }
            if containsCardNumber(digits) {
                let masked = String(repeating: "*", count: digits.count - 4) + digits.suffix(4).map { String($0) }.joined()
                out.append(contentsOf: masked.unicodeScalars)
            } else {
                out.append(contentsOf: scalars[i..<end])
            }
            i = end
        }
        return String(out)
    }

    /// The width of a separator between two groups of a number at `index`:
    /// a space or a dash, written plain or percent-encoded (`%20`, `%2D`),
    /// or a form-encoded space (`+`), so that a number in a URL or a form
    /// body (a path, a query, an egress request) is a number too; nil for
    /// anything else.
    private static func separatorWidth(_ scalars: [Unicode.Scalar], at index: Int) -> Int? {
        switch scalars[index] {
        case " ", "-", "+": return 1
        case "%":
            guard index + 2 < scalars.count, scalars[index + 1] == "2" else { return nil }
            return ["0", "D", "d"].contains(scalars[index + 2]) ? 3 : nil
        default: return nil
        }
    }

    /// Whether `text` holds a card number anywhere (what
    /// ``maskingCardNumbers(in:)`` would mask).
    public static func containsCardNumber(in text: String) -> Bool {
        maskingCardNumbers(in: text) != text
    }

    /// Whether `text` holds a card number standing on its own: digits inside
    /// a token that also has ASCII letters (a hex identifier such as
    /// `7792-df71fb33d7ad4754441815471708bb45`, a Worldline customer id) are
    /// part of that identifier. For public identifiers a provider hands out
    /// (an instrument's client session data), where about one hex id in
    /// twenty holds a Luhn-valid run of digits; logs keep the stricter
    /// ``containsCardNumber(in:)``.
    public static func containsStandaloneCardNumber(in text: String) -> Bool {
        var flattened = String.UnicodeScalarView()
        var token: [Unicode.Scalar] = []
        func flush() {
            if token.contains(where: { $0.value < 0x80 && $0.properties.isAlphabetic }) {
                flattened.append("x")
            } else {
                flattened.append(contentsOf: token)
            }
            token.removeAll()
        }
        for scalar in text.unicodeScalars {
            if scalar.value < 0x80, scalar.properties.isAlphabetic || isDigit(scalar) {
                token.append(scalar)
            } else {
                flush()
                flattened.append(scalar)
            }
        }
        flush()
        return containsCardNumber(in: String(flattened))
    }

    /// Whether `digits` pass the Luhn (mod 10) check (``Luhn``).
    public static func luhn(_ digits: [UInt8]) -> Bool { Luhn.passes(digits) }

    /// Whether some 13 to 19 consecutive digits of `digits` (all of them
    /// included) pass the Luhn check. Linear in the run's length: each
    /// window's Luhn sum comes from prefix sums.
    static func containsCardNumber(_ digits: [UInt8]) -> Bool {
        guard digits.count >= 13 else { return false }
        // plain[k]: the digits before k; extra[p][k]: what doubling adds to
        // the digits before k at positions of parity p.
        var plain = [Int](repeating: 0, count: digits.count + 1)
        var extra = [[Int]](repeating: [Int](repeating: 0, count: digits.count + 1), count: 2)
        for (k, digit) in digits.enumerated() {
            let d = Int(digit)
            let doubled = d * 2 > 9 ? d * 2 - 9 : d * 2
            plain[k + 1] = plain[k] + d
            extra[k % 2][k + 1] = extra[k % 2][k] + doubled - d
            extra[(k + 1) % 2][k + 1] = extra[(k + 1) % 2][k]
        }
        for end in 13...digits.count {
            // Within a window ending at `end`, Luhn doubles every second digit
            // counting from the last: the positions whose parity differs from end - 1's.
            let doubledParity = end % 2
            for length in 13...min(19, end) {
                let start = end - length
                let sum = plain[end] - plain[start] + extra[doubledParity][end] - extra[doubledParity][start]
                if sum % 10 == 0 { return true }
            }
        }
        return false
    }

    private static func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 48 && s.value <= 57 }

    /// `bytes` as text, card numbers masked, at most `limit` UTF-8 bytes:
    /// masked before it is cut (a number across the cut is masked whole),
    /// and the run of digits a cut leaves at the end, shorter than a card
    /// number, dropped (it may be the start of one). Whether it was cut.
    public static func maskedPrefix(_ bytes: some Collection<UInt8>, limit: Int) -> (text: String, cut: Bool) {
        // 19 digits and their separators past the limit: enough to see a number whole.
        let text = maskingCardNumbers(in: String(decoding: bytes.prefix(limit + 24), as: UTF8.self))
        guard bytes.count > limit || text.utf8.count > limit else { return (text, false) }
        var kept = String(decoding: text.utf8.prefix(limit), as: UTF8.self).unicodeScalars
        let tail = kept.reversed().prefix { isDigit($0) || $0 == " " || $0 == "-" }
        let digits = tail.filter(isDigit).count
        if digits > 0, digits < 13 { kept.removeLast(tail.count) }
        return (String(kept), true)
    }

    /// Adapter text as the host shows it (a log line, an error): masked,
    /// cut at `limit` bytes (saying so), and on one line (``oneLine(_:)``).
    public static func shown(_ bytes: some Collection<UInt8>, limit: Int) -> String {
        let (masked, cut) = maskedPrefix(bytes, limit: limit)
        return oneLine(masked) + (cut ? " … (cut at \(limit) bytes)" : "")
    }

    /// `text` as one line: line breaks, tabs and every other control
    /// character (C0, DEL, C1, U+2028, U+2029) written as escapes, so text an
    /// adapter sends cannot start a line of its own in the host's log.
    public static func oneLine(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out.append(contentsOf: "\\n".unicodeScalars)
            case 0x0D: out.append(contentsOf: "\\r".unicodeScalars)
            case 0x09: out.append(contentsOf: "\\t".unicodeScalars)
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
