/// Masks what must never reach a log: card numbers (any run of 13 to 19 digits,
/// optionally grouped by spaces or dashes, that passes the Luhn check) keep
/// only their last four digits.
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
                } else if (scalars[j] == " " || scalars[j] == "-"), j + 1 < scalars.count, isDigit(scalars[j + 1]), digits.count < 19 {
                    j += 1
                } else {
                    break
                }
            }
            if (13...19).contains(digits.count), luhn(digits) {
                let masked = String(repeating: "*", count: digits.count - 4) + digits.suffix(4).map { String($0) }.joined()
                out.append(contentsOf: masked.unicodeScalars)
            } else {
                out.append(contentsOf: scalars[i..<end])
            }
            i = end
        }
        return String(out)
    }

    /// Whether `digits` pass the Luhn (mod 10) check.
    public static func luhn(_ digits: [UInt8]) -> Bool {
        var sum = 0
        for (index, digit) in digits.reversed().enumerated() {
            var d = Int(digit)
            if index % 2 == 1 {
                d *= 2
                if d > 9 { d -= 9 }
            }
            sum += d
        }
        return sum % 10 == 0
    }

    private static func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 48 && s.value <= 57 }
}
