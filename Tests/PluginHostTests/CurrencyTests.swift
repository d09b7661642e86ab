import Foundation
import GatewayPayloads
import Testing
import TestSupport

/// Minor units and the ISO 4217 exponents: a KWD amount of 1234 is 1.234 everywhere.
@Suite struct CurrencyTests {
    @Test(arguments: [
        (Int64(1234), "KWD", "1.234"), (1000, "SAR", "10.00"), (5, "USD", "0.05"), (-5, "USD", "-0.05"),
        (500, "JPY", "500"), (1, "BHD", "0.001"), (100_000, "OMR", "100.000"), (0, "SEK", "0.00"),
        (Int64.max, "JOD", "9223372036854775.807"),
    ])
    func decimalStringsUseTheCurrencysExponent(value: Int64, currency: String, text: String) throws {
        #expect(try Money(value: value, currency: currency).decimalString() == text)
        if currency != "JPY" { #expect(try Money(decimal: text, currency: currency) == Money(value: value, currency: currency)) }
    }

    @Test func shortFractionsArePadded() throws {
        #expect(try Money(decimal: "1.2", currency: "KWD").value == 1200)
        #expect(try Money(decimal: "7", currency: "SAR").value == 700)
    }

    @Test(arguments: [("1.2345", "KWD"), ("1.5", "JPY"), ("1,00", "SAR"), ("1e3", "SAR"), ("", "SAR"), (".5", "SAR"), ("5.", "SAR"), ("+1", "SAR"), ("99999999999999999999", "SAR")])
    func malformedOrOverPreciseDecimalsAreRefused(text: String, currency: String) {
        #expect(throws: MoneyError.self) { try Money(decimal: text, currency: currency) }
    }

    /// A provider whose format fixes the decimals (OPPWA's two): padded or
    /// cut only where the digits cut are zeros, else refused.
    @Test(arguments: [(Int64(1230), "KWD", "1.23"), (9200, "SAR", "92.00"), (500, "JPY", "500.00"), (-1230, "BHD", "-1.23"), (5, "SAR", "0.05")])
    func aFixedNumberOfDecimalsIsWrittenExactly(value: Int64, currency: String, text: String) throws {
        #expect(try Money(value: value, currency: currency).decimalString(fractionDigits: 2) == text)
        if currency != "JPY" { #expect(try Money(decimal: text, currency: currency) == Money(value: value, currency: currency)) }
    }

    @Test(arguments: [(Int64(1234), "KWD"), (1, "OMR"), (9_999_999_999_999, "JOD")])
    func anAmountTwoDecimalsCannotCarryIsRefusedNotRounded(value: Int64, currency: String) {
        #expect(throws: MoneyError.self) { try Money(value: value, currency: currency).decimalString(fractionDigits: 2) }
    }

    @Test func unknownCurrenciesAreRefusedNotGuessed() {
        #expect(Currency(code: "XXX") == nil)
        #expect(Currency(code: "sar") == nil)
        #expect(throws: MoneyError.unknownCurrency("ZZZ")) { try Money(value: 1, currency: "ZZZ").decimalString() }
    }

    @Test func everyKnownCurrencyRoundTripsAtItsExponent() throws {
        var g = SplitMix64(seed: 7)
        for (code, _) in Currency.known {
            for _ in 0..<200 {
                let money = Money(value: Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &g), currency: code)
                #expect(try Money(decimal: money.decimalString(), currency: code) == money)
            }
        }
    }

    @Test func everyKnownCurrencyHasItsThreeDigitNumericCode() {
        #expect(Set(Currency.numericCodes.keys) == Set(Currency.known.keys))
        #expect(Set(Currency.numericCodes.values).count == Currency.numericCodes.count)
        #expect(Currency.numericCodes.values.allSatisfy { $0.utf8.count == 3 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
        #expect(Currency(code: "SAR")?.numericCode == "682" && Currency(code: "BHD")?.numericCode == "048" && Currency(code: "JPY")?.numericCode == "392")
    }

    /// A currency a shipped manifest offers must be one the host knows (its
    /// exponent): otherwise no session in it could ever be made (Worldline
    /// listed CHF before the host knew it).
    @Test func everyCurrencyAShippedManifestOffersIsKnown() throws {
        for url in try FileManager.default.contentsOfDirectory(at: BuildProducts.shippedManifests, includingPropertiesForKeys: nil)
            where url.pathExtension == "json" {
            let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            for code in manifest["currencies"] as? [String] ?? [] {
                #expect(Currency(code: code) != nil, "\(url.lastPathComponent) offers \(code), which the host does not know")
            }
        }
    }
}
