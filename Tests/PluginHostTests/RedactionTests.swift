import Testing
@testable import PluginHost
@testable import PaymentFields

/// The card-number masker every log line, problem and provider status goes
/// through.
@Suite struct RedactionTests {
    @Test(arguments: [
        ("pan=4111111111111111 ok", "pan=************1111 ok"),
        ("card 4111 1111 1111 1111.", "card ************1111."),
        ("{\"n\":\"5500-0000-0000-0004\"}", "{\"n\":\"************0004\"}"),
        // In a URL or a form body (an egress request's query, a path).
        ("/x?number=4111%201111%201111%201111&y=1", "/x?number=************1111&y=1"),
        ("number=4111+1111+1111+1111", "number=************1111"),
        ("/v1/sessions/5500%2D0000%2d0000%2D0004", "/v1/sessions/************0004"),
    ])
    func cardNumbersAreMaskedInAnyGrouping(text: String, masked: String) {
        #expect(Redaction.maskingCardNumbers(in: text) == masked)
    }

    /// Fails Luhn and holds no Luhn-valid window; too short; an amount; a timestamp.
    @Test(arguments: ["4111111111111113", "order 123456789012", "amount 1000", "ts 1732233600000"])
    func numbersThatAreNotCardNumbersStay(text: String) {
        #expect(Redaction.maskingCardNumbers(in: text) == text)
    }

    /// A card number glued to other digits (a prefix, a suffix, both; a
    /// reference longer than 19 digits; grouped) is not left readable: the
    /// whole run is masked but for its last four digits.
    @Test(arguments: [
        ("ref=0041111111111111111", "ref=***************1111"),
        ("ref=41111111111111111234", "ref=****************1234"),
        ("id 98411111111111111177 end", "id ****************1177 end"),
        ("x 12345" + "5500000000000004" + "6789", "x " + String(repeating: "*", count: 21) + "6789"),
        ("n=4111 1111 1111 1111 1234", "n=****************1234"),
    ])
    func aCardNumberInsideALongerDigitRunIsMasked(text: String, masked: String) {
        let result = Redaction.maskingCardNumbers(in: text)
        #expect(result == masked)
        #expect(!result.contains("411111111111"))
        #expect(!result.contains("550000000000"))
    }

    /// Conservative by design: a 16-digit number that fails Luhn but whose
    /// last 13 digits pass it (`1111111111112`, a 13-digit card) is masked.
    @Test func aLuhnValidWindowOfThirteenDigitsIsEnough() {
        #expect(Redaction.maskingCardNumbers(in: "4111111111111112") == "************1112")
    }

    /// The window search agrees with checking every window directly.
    @Test(arguments: 0..<200)
    func theWindowSearchAgreesWithTheLuhnCheckOfEachWindow(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let digits = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...9, using: &generator) }
        var expected = false
        if digits.count >= 13 {
            for length in 13...min(19, digits.count) {
                for start in 0...(digits.count - length) where Redaction.luhn(Array(digits[start..<(start + length)])) {
                    expected = true
                }
            }
        }
        #expect(Redaction.containsCardNumber(digits) == expected, "\(digits.map(String.init).joined())")
    }
}
