import Foundation
import GatewayPayloads
import TestSupport
import Testing

/// The one wire date format, checked against Foundation's ISO 8601 formatter
/// as a referee, and what it promises: a written date reads back as the same
/// instant, truncation is exact and stable, any RFC 3339 time is read.
@Suite struct WireDateTests {
    nonisolated(unsafe) static let referee: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    /// Milliseconds across the format's years (1970 and 2038 included, where
    /// a Date's 2001 origin makes naive flooring one off).
    @Test(arguments: 0..<40)
    func writtenReadsBackAndAgreesWithTheReferee(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let ms = [Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &g),
                      Int64.random(in: 0...40_000_000_000, using: &g),
                      Int64.random(in: 2_147_000_000_000...2_200_000_000_000, using: &g)].randomElement(using: &g)!
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let text = WireDate.string(date)
            #expect(text.utf8.count == 24 && text.hasSuffix("Z"), "\(text)")
            #expect(WireDate.parse(text) == date, "\(ms) → \(text)")
            #expect(WireDate.truncated(date) == date, "\(ms) is already whole milliseconds")
            if let other = Self.referee.date(from: text) {
                #expect(abs(other.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005, "\(text): referee \(other)")
            } else {
                Issue.record("the referee cannot read \(text)")
            }
            // A time between two milliseconds truncates to the earlier, and stays there.
            let between = date.addingTimeInterval(0.000_4)
            #expect(WireDate.truncated(between) == date)
            #expect(WireDate.truncated(WireDate.truncated(between)) == date)
        }
    }

    @Test func anyRFC3339TimeIsReadAndNothingElse() throws {
        let base = try #require(WireDate.parse("2026-11-28T08:21:22.123Z"))
        #expect(WireDate.parse("2026-11-28T11:21:22.123+03:00") == base)
        #expect(WireDate.parse("2026-11-28t08:21:22.123456789z") == base)
        #expect(WireDate.parse("2026-11-28T08:21:22Z").map(WireDate.string) == "2026-11-28T08:21:22.000Z")
        #expect(WireDate.parse("2016-12-31T23:59:60Z") != nil, "a leap second")
        for bad in ["2026-11-28T08:21:60Z", "2026-02-29T00:00:00Z", "2026-11-28 08:21:22Z", "2026-11-28T08:21:22", "2026-11-28T08:21:22.Z",
                    "2026-13-01T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T08:21:22+0300", ""] {
            #expect(WireDate.parse(bad) == nil, "\(bad)")
        }
        #expect(WireDate.string(try #require(WireDate.parse("2024-02-29T23:59:59.999Z"))) == "2024-02-29T23:59:59.999Z")
        #expect(WireDate.string(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
    }
}
