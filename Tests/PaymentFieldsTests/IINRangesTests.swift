import Foundation
import GatewayPayloads
import PaymentFields
import Testing

/// Card ranges (`iin-ranges.json`) and the lookup on them: the shipped file
/// loads and is consistent, the most specific range wins, co-badged mada
/// cards name both brands, and no answer carries more than six digits.
@Suite("IIN ranges")
struct IINRangesTests {
    static func shipped() throws -> IINRanges { try IINRanges.shipped.get() }

    @Test func theShippedFileLoadsAndNamesASourceForEveryBrand() throws {
        let ranges = try Self.shipped()
        #expect(ranges.ranges.filter { $0.brand == "mada" }.count == 107)
        for brand in Set(ranges.ranges.flatMap { [$0.brand] + $0.coBrands }) {
            #expect(ranges.sources.contains { $0.covers.contains(brand) && $0.url.hasPrefix("https://") }, "no source covers \(brand)")
        }
    }

    /// A co-brand is a claim the file makes twice: the co-badged range lies
    /// inside a range of that brand, so the data cannot say "Visa" of a
    /// prefix that is not a Visa one.
    @Test func everyCoBrandIsTheBrandOfAWiderRangeHoldingIt() throws {
        let ranges = try Self.shipped()
        for range in ranges.ranges {
            for coBrand in range.coBrands {
                let holders = ranges.ranges.filter { wider in
                    wider.brand == coBrand && wider.low.count < range.low.count
                        && wider.low <= String(range.low.prefix(wider.low.count)) && String(range.high.prefix(wider.low.count)) <= wider.high
                }
                #expect(!holders.isEmpty, "\(range.low) says \(coBrand) but lies in no \(coBrand) range")
            }
        }
    }

    @Test(arguments: [
        ("4464 0400 0000 0007", "mada", ["visa"]),        // HyperPay's sandbox mada card
        ("440647", "mada", ["visa"]),
        ("5297 4100 0000 0000", "mada", ["mastercard"]),
        ("968208", "mada", []),                           // a domestic-only mada range
        ("40545400", "mada", ["visa"]),                   // an eight-digit split BIN...
        ("405454", "visa", []),                           // ...whose six digits alone are Visa
        ("4111111111111111", "visa", []),
        ("2221000000000009", "mastercard", []),
        ("2720 99", "mastercard", []),
        ("378282", "amex", []),
        ("٤٤٠٦٤٧", "mada", ["visa"]),                     // Arabic-Indic digits
    ])
    func theMostSpecificRangeIsTheBrandAndItsCoBrandsFollow(prefix: String, brand: String, coBrands: [String]) throws {
        let details = try Self.shipped().details(of: prefix, allowed: { _ in true })
        #expect(details.status == .supported && details.brand?.brand == brand && details.coBrands.map(\.brand) == coBrands, "\(details)")
        #expect(details.iin?.count == 6)
    }

    @Test func allowedIsPerBrandAndTheStatusFollowsThem() throws {
        let ranges = try Self.shipped()
        let visaOnly = try ranges.details(of: "440647", allowed: { $0 == "visa" })
        #expect(visaOnly.status == .supported && visaOnly.brand == .init(brand: "mada", allowed: false) && visaOnly.coBrands == [.init(brand: "visa", allowed: true)])
        let madaOnly = try ranges.details(of: "440647", allowed: { $0 == "mada" })
        #expect(madaOnly.status == .supported && madaOnly.brand?.allowed == true && madaOnly.coBrands.first?.allowed == false)
        let none = try ranges.details(of: "440647", allowed: { _ in false })
        #expect(none.status == .existingButNotAllowed && none.brand?.brand == "mada" && none.coBrands.count == 1)
        #expect(try ranges.details(of: "378282", allowed: { $0 == "visa" }).status == .existingButNotAllowed)
    }

    @Test(arguments: ["", "4", "44064", "4406 4", "٤٤٠"])
    func underSixDigitsIsNotEnough(prefix: String) throws {
        let details = try Self.shipped().details(of: prefix, allowed: { _ in true })
        #expect(details == IINDetails(status: .notEnoughDigits, iin: nil, brand: nil, coBrands: []))
    }

    @Test(arguments: ["100000", "999999", "700000"])
    func sixDigitsOfNoRangeAreUnknown(prefix: String) throws {
        let details = try Self.shipped().details(of: prefix, allowed: { _ in true })
        #expect(details.status == .unknown && details.iin == prefix && details.brand == nil)
    }

    @Test(arguments: ["4406a7", "4406.47", "+440647", "44064712345678901234", "4406\u{0}47"])
    func aPrefixThatIsNotACardStartIsRefusedWithWhy(prefix: String) throws {
        #expect(throws: IINPrefixError.self) { try IINRanges.shipped.get().details(of: prefix, allowed: { _ in true }) }
    }

    /// The whole card number in, six digits out: the answer's JSON never
    /// carries more.
    @Test func theAnswerCarriesSixDigitsOfAWholeCardNumberAndNoMore() throws {
        let details = try Self.shipped().details(of: "4464040000000007", allowed: { $0 == "visa" })
        let text = String(decoding: details.jsonBytes(), as: UTF8.self)
        #expect(text.contains(#""iin":"446404""#) && !text.contains("4464040") && !text.contains("0000007"), "\(text)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(details.jsonBytes())) as? [String: Any])
        #expect(object["status"] as? String == "supported" && object["brand"] as? String == "mada" && object["allowed"] as? Bool == false)
        #expect((object["coBrands"] as? [[String: Any]])?.first?["allowed"] as? Bool == true)
    }

    @Test(arguments: [
        (#"{"format": 2, "sources": [], "ranges": []}"#, "format"),
        (#"{"format": 1, "sources": [], "ranges": []}"#, "sources"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "visa"}], "ranges": [{"prefix": "4x", "brand": "visa"}]}"#, "ranges[0]"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "visa"}], "ranges": [{"prefix": "123456789", "brand": "visa"}]}"#, "ranges[0]"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "visa"}], "ranges": [{"from": "55", "to": "51", "brand": "visa"}]}"#, "ranges[0]"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "visa"}], "ranges": [{"prefix": "4", "brand": "Visa"}]}"#, "ranges[0]"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "v"}], "ranges": [{"prefix": "4", "brand": "visa"}, {"from": "3", "to": "5", "brand": "x"}]}"#, "ranges[0]"),
        (#"{"format": 1, "sources": [{"name": "x", "url": "https://x", "covers": "v"}], "ranges": [{"prefix": "4", "from": "4", "to": "4", "brand": "visa"}]}"#, "ranges[0]"),
        ("[1]", "(root)"),
        ("{", "(root)"),
    ])
    func aBrokenRangesFileSaysWhatAndWhere(json: String, at: String) {
        #expect {
            _ = try IINRanges(json: Data(json.utf8))
        } throws: { error in
            (error as? IINRangesError)?.at == at
        }
    }
}
