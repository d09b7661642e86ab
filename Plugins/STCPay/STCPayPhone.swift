import Foundation
import GatewayAdapterSDK

/// A payer's phone number as STC Pay takes it: a Saudi mobile number in
/// international form without spaces, `9665XXXXXXXX`.
enum STCPayPhone {
    /// Normalises what a payer types: `05XXXXXXXX`, `5XXXXXXXX`,
    /// `+966 5X…`, `966 5X…`, `00966 5X…`, with spaces, dashes, dots or
    /// parentheses. Throws ``AdapterError/invalidRequest(_:)`` naming `field`
    /// for anything that is not a Saudi mobile number.
    static func normalise(_ text: String, field: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let plus = trimmed.hasPrefix("+")
        let digits = String((plus ? trimmed.dropFirst() : Substring(trimmed)).filter { !" -.()\u{00A0}".contains($0) })
        func refuse(_ why: String) -> AdapterError {
            .invalidRequest("\(field) \"\(masked(text))\" is not a Saudi mobile number (\(why)); STC Pay needs 05XXXXXXXX or +966 5XXXXXXXX")
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw refuse("only digits, spaces, dashes and a leading + are allowed") }
        var national: Substring
        if plus {
            guard digits.hasPrefix("966") else { throw refuse("the country code must be +966") }
            national = digits.dropFirst(3)
        } else if digits.hasPrefix("00966") {
            national = digits.dropFirst(5)
        } else if digits.hasPrefix("966") && digits.count == 12 {
            national = digits.dropFirst(3)
        } else {
            national = Substring(digits)
        }
        if national.hasPrefix("0") { national = national.dropFirst() }
        guard national.count == 9, national.hasPrefix("5") else { throw refuse("a mobile number has 9 digits after the country code, starting with 5") }
        return "966" + national
    }

    /// The number with all but its last 3 digits hidden, for messages.
    static func masked(_ text: String) -> String {
        let shown = text.prefix(20)
        return String(repeating: "•", count: max(0, shown.count - 3)) + shown.suffix(3)
    }
}
