import Foundation

/// Opaque ids: a prefix, then 10 base-32 characters of the creation time in
/// milliseconds (50 bits) and 16 random ones (80 bits), as in ULID.
///
/// Ids made later sort after earlier ones, so the store's indexes grow at
/// their right edge: a group commit of many new sessions dirties a few pages
/// instead of one page per session, and that is most of what the log writes.
enum Identifiers {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    static func make(_ prefix: String) -> String {
        let milliseconds = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        // 128 random bits in two draws (a system call each); 80 are used.
        var generator = SystemRandomNumberGenerator()
        let random: (UInt64, UInt64) = (generator.next(), generator.next())
        var bytes = [UInt8](prefix.utf8)
        bytes.reserveCapacity(bytes.count + 27)
        bytes.append(UInt8(ascii: "_"))
        for index in (0..<10).reversed() {
            bytes.append(alphabet[Int((milliseconds >> (UInt64(index) * 5)) & 31)])
        }
        for index in 0..<16 {
            let word = index < 12 ? random.0 >> (UInt64(index) * 5) : random.1 >> (UInt64(index - 12) * 5)
            bytes.append(alphabet[Int(word & 31)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
