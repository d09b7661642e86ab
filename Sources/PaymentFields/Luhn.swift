/// The Luhn (mod 10) check of card numbers: the host's validators, its
/// redaction of logs, and the provider simulators all use this one.
public enum Luhn {
    /// Whether `digits` (each 0 to 9) pass the check.
    public static func passes(_ digits: some BidirectionalCollection<UInt8>) -> Bool {
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

    /// Whether `text` is one or more ASCII digits passing the check.
    public static func passes(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ (48...57).contains($0) }) else { return false }
        return passes(bytes.map { $0 - 48 })
    }
}
