import Foundation

/// The one date format on the wire: RFC 3339 in UTC with milliseconds,
/// `2026-11-28T08:21:22.123Z`, in every API answer, event, document and
/// `--json` output. Written and read by hand (no Foundation formatter: this
/// runs for every date of every answer).
///
/// Writing truncates to the millisecond; ``truncated(_:)`` gives the date a
/// document reads back, so a clock that hands out truncated dates round-trips
/// exactly.
public enum WireDate {
    /// `date` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes).
    public static func string(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `date` truncated to the millisecond (toward the past), exactly as a
    /// written date reads back.
    public static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000)
    }

    /// The whole milliseconds since 1970 at or before `date`, such that
    /// `Date(ms / 1000)` (what ``parse(_:)`` gives) is at or before it too:
    /// a Date counts from 2001, so `floor(t * 1000)` alone can be one off.
    static func milliseconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return 0 }
        // Years 0000 to 9999, the format's range.
        var ms = Int64(min(max((seconds * 1000).rounded(.down), -62_167_219_200_000), 253_402_300_799_999))
        if ms < 253_402_300_799_999, Date(timeIntervalSince1970: Double(ms + 1) / 1000) <= date { ms += 1 }
        if ms > -62_167_219_200_000, Date(timeIntervalSince1970: Double(ms) / 1000) > date { ms -= 1 }
        return ms
    }

    /// Appends `date`'s 24 bytes to `bytes`.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        let ms = milliseconds(date)
        var days = ms / 86_400_000
        var inDay = ms % 86_400_000
        if inDay < 0 {
            inDay += 86_400_000
            days -= 1
        }
        // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(48 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(inDay / 3_600_000, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(inDay / 60_000 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(inDay / 1000 % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(inDay % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// An RFC 3339 date-time (`2026-11-28T08:21:22Z`, with any fraction and
    /// `Z` or an offset such as `+03:00`), or nil when `text` is not one.
    /// Digits past the millisecond are dropped.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= b.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let c = b[index]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
                index += 1
            }
            return value
        }
        func take(_ byte: UInt8, or other: UInt8? = nil) -> Bool {
            guard index < b.count, b[index] == byte || b[index] == other else { return false }
            index += 1
            return true
        }
        guard let year = number(4), take(UInt8(ascii: "-")), let month = number(2), take(UInt8(ascii: "-")), let day = number(2),
              take(UInt8(ascii: "T"), or: UInt8(ascii: "t")), let hour = number(2), take(UInt8(ascii: ":")), let minute = number(2),
              take(UInt8(ascii: ":")), let second = number(2)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), day >= 1, day <= monthDays[Int(month - 1)], hour <= 23, minute <= 59,
              second <= 59 || (second == 60 && hour == 23 && minute == 59) else { return nil }
        var millis: Int64 = 0
        if take(UInt8(ascii: ".")) {
            var digits = 0
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                if digits < 3 { millis = millis * 10 + Int64(b[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes: Int64 = 0
        if take(UInt8(ascii: "Z"), or: UInt8(ascii: "z")) {
        } else if index < b.count, b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-") {
            let sign: Int64 = b[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let h = number(2), take(UInt8(ascii: ":")), let m = number(2), h <= 23, m <= 59 else { return nil }
            offsetMinutes = sign * (h * 60 + m)
        } else {
            return nil
        }
        guard index == b.count else { return nil }
        // A civil date to days since 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86400 + hour * 3600 + minute * 60 + min(second, 59) - offsetMinutes * 60
        return Date(timeIntervalSince1970: Double(seconds * 1000 + millis) / 1000)
    }
}

extension JSONWriter {
    /// `date` as a wire date string (``WireDate``); nothing when nil.
    public mutating func member(_ name: StaticString, date: Date?) {
        guard let date else { return }
        key(name)
        self.date(date)
    }

    /// `value` as a wire date string (``WireDate``).
    public mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        WireDate.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONParser {
    /// A date: a wire date string, or (in documents stored before the wire
    /// format was one) Unix seconds as a number.
    public mutating func date() throws(JSONParseError) -> Date {
        if nextIsNumber() { return Date(timeIntervalSince1970: try double()) }
        let text = try string()
        guard let date = WireDate.parse(text) else { throw error("\"\(text)\" is not an RFC 3339 date-time") }
        return date
    }

    public mutating func optionalDate() throws(JSONParseError) -> Date? {
        takeNull() ? nil : try date()
    }
}
