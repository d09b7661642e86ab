import XCTest
@testable import PluginHost

final class RedactionTests: XCTestCase {
    func testCardNumbersAreMaskedInAnyGrouping() {
        XCTAssertEqual(Redaction.maskingCardNumbers(in: "pan=4111111111111111 ok"), "pan=************1111 ok")
        XCTAssertEqual(Redaction.maskingCardNumbers(in: "card 4111 1111 1111 1111."), "card ************1111.")
        XCTAssertEqual(Redaction.maskingCardNumbers(in: "{\"n\":\"5500-0000-0000-0004\"}"), "{\"n\":\"************0004\"}")
    }

    func testNumbersThatAreNotCardNumbersStay() {
        // Fails Luhn; too short; an amount; a timestamp.
        for text in ["4111111111111112", "order 123456789012", "amount 1000", "ts 1732233600000"] {
            XCTAssertEqual(Redaction.maskingCardNumbers(in: text), text)
        }
    }
}
